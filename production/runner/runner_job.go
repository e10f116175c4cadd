package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/speech"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/storage"
)

// WaveformName is the output-folder file name of the waveform_image the
// runner stores when the production asked for no waveform output. The
// leading underscore keeps it apart from output names, which start with
// the basename.
const WaveformName = "_waveform.png"

// LoudnessChartName is the output-folder file name of the loudness_image.
const LoudnessChartName = "_loudness.png"

// infraError marks a failure of the store or the blob store: the job is
// retried, the production is not at fault.
type infraError struct{ err error }

func (e *infraError) Error() string { return e.err.Error() }
func (e *infraError) Unwrap() error { return e.err }

func infra(err error) error {
	if err == nil {
		return nil
	}
	var ie *infraError
	if errors.As(err, &ie) {
		return err
	}
	return &infraError{err}
}

// localPather is implemented by blob stores on a local folder
// (storage/blob.Dir): the engine then reads inputs in place.
type localPather interface {
	LocalPath(key string) (string, error)
}

// jobRun is one claim of a job.
type jobRun struct {
	r     *Runner
	job   storage.Job
	lease storage.Lease
	log   *slog.Logger
	temps []string      // local copies to remove
	took  time.Duration // how long the engine ran

	// The progress last stored: status, percentage and when.
	status     production.Status
	percent    int
	progressAt time.Time
	// spans are the progress spans of the statuses (nil: stageSpan).
	spans map[production.Status][2]float64
	// recognizing is set once Speech Recognition has been reported.
	recognizing bool
}

func (j *jobRun) cleanup() {
	for _, t := range j.temps {
		os.Remove(t)
	}
}

func (j *jobRun) run(ctx context.Context) error {
	defer j.cleanup()
	st := j.r.cfg.Store
	if j.job.State == storage.JobStopping {
		// Stopped while its worker was gone: this claim only ends it.
		bctx, cancel := bg(ctx)
		defer cancel()
		return j.stopped(bctx)
	}
	res, err := st.GetResource(ctx, j.job.Owner, storage.KindProduction, j.job.Production)
	if errors.Is(err, storage.ErrNotFound) {
		// Deleted while queued: nothing left to do.
		bctx, cancel := bg(ctx)
		defer cancel()
		if err := st.Complete(bctx, j.lease); err != nil && !errors.Is(err, storage.ErrLeaseLost) {
			return err
		}
		j.log.Info("job of a deleted production completed")
		return nil
	}
	if err != nil {
		return j.end(ctx, nil, infra(err))
	}
	p, err := production.DecodeDocument(res)
	if err != nil {
		return j.end(ctx, nil, err)
	}
	// The kind of an earlier run's error goes with it (the engine clears
	// the message).
	p.ErrorKind, p.FailedInputs = "", ""
	j.status = production.Status(res.Status)
	if j.job.Crashes >= MaxCrashes {
		// Whatever it does takes its worker down: not a third time.
		j.log.Warn("job gives up: its worker died while processing it, twice", "crashes", j.job.Crashes)
		p.Fail(j.status, production.ErrorProcessing, crashedMessage)
		return j.end(ctx, p, errCrashed)
	}
	// A crashed earlier attempt may have left partial blobs behind.
	cleanTemp(j.r.cfg.Blobs, OutputPrefix(p.UUID))
	in, err := j.inputs(ctx, p)
	if err == nil {
		err = j.checkCredits(ctx, p, in)
	}
	if err != nil {
		var ie *infraError
		if !errors.As(err, &ie) {
			// Failed before processing: the error is the production's.
			p.Fail(production.StatusWaiting, errorKind(err), err.Error())
		}
		return j.end(ctx, p, err)
	}
	out := &blobOutput{ctx: ctx, blobs: j.r.cfg.Blobs, uuid: p.UUID, dir: j.r.cfg.TempDir}
	progress := func(s production.Status, frac float64) {
		if s.Finished() || s == production.StatusNotStarted {
			return // stored with the result
		}
		if err := j.progress(ctx, s, frac); err != nil {
			j.log.Warn("storing progress failed", "status", s, "err", err)
		}
	}
	start := j.r.cfg.Now()
	result, err := j.r.engine.Run(ctx, p, in, out, progress)
	j.took = j.r.cfg.Now().Sub(start)
	if err != nil && p.Status == production.StatusError {
		// The engine's words, classified and without Go's prefixes.
		p.Fail(*p.ErrorStatus, errorKind(err), p.ErrorMessage)
	}
	if err == nil {
		err = j.sideBlobs(ctx, p, result)
	}
	if err == nil {
		err = j.transferOutputs(ctx, p, result)
	}
	if err != nil && out.failed != nil {
		err = infra(fmt.Errorf("%w (%w)", err, out.failed))
	}
	return j.end(ctx, p, err, result)
}

// errorKind classifies a failure for the production's owner (see
// production.ErrorKind). audio.ErrUnsupported is left out of the input
// errors: the engine also reports an encoder or renderer it lacks with
// it, which starting again (on a better equipped worker) may fix.
func errorKind(err error) production.ErrorKind {
	switch {
	case errors.Is(err, ErrInsufficientCredits):
		return production.ErrorCredits
	case errors.Is(err, ErrInputMissing), errors.Is(err, engine.ErrNoInput), errors.Is(err, audio.ErrMalformed),
		errors.Is(err, audio.ErrUnknownFormat), errors.Is(err, audio.ErrTooLong):
		return production.ErrorInput
	case errors.Is(err, production.ErrInvalid):
		return production.ErrorSettings
	}
	return production.ErrorProcessing
}

// Progress estimate: the part of the whole, in percent, that each status
// covers. Timings of the engine on two minutes of speech (one to three
// outputs) spent 20-40 % of the time in Audio Processing and the rest in
// Audio Encoding; the steps after encoding are short, except an outgoing
// transfer, whose length depends on the service.
var stageSpan = map[production.Status][2]float64{
	production.StatusAudioProcessing:  {0, 35},
	production.StatusAudioEncoding:    {35, 95},
	production.StatusMonoMixdown:      {95, 97},
	production.StatusSplitChapters:    {95, 97},
	production.StatusOutgoingTransfer: {97, 99},
}

// speechStageSpan replaces stageSpan for a production with speech
// recognition, which runs first and, with PocketSphinx, takes about as
// long as the audio. The engine reports Audio Processing before it too,
// while it probes the inputs and decodes those only ffmpeg reads (a
// minute for two hours of Opus, against hours of recognition): that part
// takes preRecognitionSpan, so the bar does not jump to Audio
// Processing's later span and then stand still through the recognition.
var speechStageSpan = map[production.Status][2]float64{
	production.StatusSpeechRecognition: {1, 50},
	production.StatusAudioProcessing:   {50, 67},
	production.StatusAudioEncoding:     {67, 95},
	production.StatusMonoMixdown:       {95, 97},
	production.StatusSplitChapters:     {95, 97},
	production.StatusOutgoingTransfer:  {97, 99},
}

// preRecognitionSpan is Audio Processing's span under speechStageSpan
// until Speech Recognition starts.
var preRecognitionSpan = [2]float64{0, 4}

// progressEvery is the least time between two stored progress updates of
// one run within a status (a status change is stored at once).
const progressEvery = time.Second

// percentDone is the progress estimate of fraction frac of status s:
// never less than before, so a status met again does not turn it back.
func (j *jobRun) percentDone(s production.Status, frac float64) int {
	spans := j.spans
	if spans == nil {
		spans = stageSpan
	}
	if s == production.StatusSpeechRecognition {
		j.recognizing = true
	}
	span, ok := spans[s]
	if !ok {
		return j.percent
	}
	if s == production.StatusAudioProcessing && j.spans != nil && !j.recognizing {
		span = preRecognitionSpan
	}
	frac = min(max(frac, 0), 1)
	return max(j.percent, int(span[0]+frac*(span[1]-span[0])))
}

// progress stores the engine's progress: a status change at once (with
// the lease check of setStatus), the percentage at most once per
// progressEvery and only when it moved.
func (j *jobRun) progress(ctx context.Context, s production.Status, frac float64) error {
	pct := j.percentDone(s, frac)
	if s != j.status {
		return j.setStatusAt(ctx, s, pct)
	}
	now := j.r.cfg.Now()
	if pct == j.percent || now.Sub(j.progressAt) < progressEvery {
		return nil
	}
	j.percent, j.progressAt = pct, now
	return j.r.cfg.Store.SetProgress(ctx, j.job.Owner, j.job.Production, pct)
}

// setStatus stores a progress status, guarded by the lease: a stopped job
// (its lease canceled) must not overwrite the API's Stopping. Losing the
// lease here cancels the run at once instead of at the next heartbeat.
func (j *jobRun) setStatus(ctx context.Context, s production.Status) error {
	return j.setStatusAt(ctx, s, j.percentDone(s, 0))
}

// setStatusAt is setStatus with the progress percentage to store.
func (j *jobRun) setStatusAt(ctx context.Context, s production.Status, pct int) error {
	err := j.r.cfg.Store.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.Heartbeat(ctx, j.lease, j.r.cfg.Lease); err != nil {
			return err
		}
		if err := tx.SetStatus(ctx, j.job.Owner, storage.KindProduction, j.job.Production, int(s)); err != nil {
			return err
		}
		return tx.SetProgress(ctx, j.job.Owner, j.job.Production, pct)
	})
	if err == nil {
		j.status, j.percent, j.progressAt = s, pct, j.r.cfg.Now()
	}
	if errors.Is(err, storage.ErrLeaseLost) {
		if c, ok := ctx.Value(cancelKey{}).(context.CancelCauseFunc); ok {
			c(err)
		}
	}
	return err
}

// cancelKey lets setStatus reach the job's cancel function.
type cancelKey struct{}

// inputs finds the production's files in the blob store and makes them
// local files for the engine.
func (j *jobRun) inputs(ctx context.Context, p *production.Production) (engine.Inputs, error) {
	var in engine.Inputs
	// An input named on an incoming service was copied into the blob
	// store when the production was saved (as an upload or URL is), so
	// it is found the same way.
	if !p.IsMultitrack {
		if p.InputFile == "" {
			return in, engine.ErrNoInput
		}
		key, err := j.findBlob(ctx, production.InputKey(p.UUID, inputName(p.InputFile)), production.InputPrefix(p.UUID))
		if err != nil {
			return in, err
		}
		if in.Main, err = j.local(ctx, key); err != nil {
			return in, err
		}
	}
	for _, m := range p.MultiInputFiles {
		if m.Type == production.InputMultitrack && (!p.IsMultitrack || m.InputFile == "") {
			continue // a track without a file is left out of the mix (the engine says so)
		}
		key, err := j.findBlob(ctx, production.IntroKey(p.UUID, m.ID, inputName(m.InputFile)), production.IntroPrefix(p.UUID, m.ID))
		if err != nil {
			return in, fmt.Errorf("%s %q: %w", m.Type, m.ID, err)
		}
		path, err := j.local(ctx, key)
		if err != nil {
			return in, err
		}
		if in.Multi == nil {
			in.Multi = map[string]string{}
		}
		in.Multi[m.ID] = path
	}
	if p.Image != nil && *p.Image != "" {
		if name := urlBase(*p.Image); name != "" {
			key := production.ImageKey(p.UUID, name)
			if _, err := j.r.cfg.Blobs.Stat(ctx, key); err == nil {
				if in.Cover, err = j.local(ctx, key); err != nil {
					return in, err
				}
			} else if !errors.Is(err, storage.ErrNotFound) {
				return in, infra(err)
			}
		}
	}
	// The API stored each chapter image under a name of its content and
	// pointed the chapter at its download URL.
	for _, c := range p.Chapters {
		if c.Image == nil || in.ChapterImages[*c.Image] != "" {
			continue
		}
		name := urlBase(*c.Image)
		if !production.IsChapterImageName(name) {
			continue
		}
		key := production.ChapterImageKey(p.UUID, name)
		if _, err := j.r.cfg.Blobs.Stat(ctx, key); errors.Is(err, storage.ErrNotFound) {
			continue
		} else if err != nil {
			return in, infra(err)
		}
		path, err := j.local(ctx, key)
		if err != nil {
			return in, err
		}
		if in.ChapterImages == nil {
			in.ChapterImages = map[string]string{}
		}
		in.ChapterImages[*c.Image] = path
	}
	if sr := p.SpeechRecognition; sr != nil {
		// Without a recognizer the engine skips recognition (with a
		// warning) and the plain spans hold.
		if in.Recognizer = j.recognizer(ctx, sr.UUID); in.Recognizer != nil {
			j.spans = speechStageSpan
		}
	}
	return in, nil
}

// inputName is the stored file name of an input field: the API keeps
// the name of an uploaded or fetched file; a URL stands for its last path
// segment.
func inputName(s string) string {
	if strings.Contains(s, "://") {
		return urlBase(s)
	}
	return s
}

func urlBase(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	name, err := url.PathUnescape(path.Base(u.EscapedPath()))
	if err != nil || name == "/" || name == "." {
		return ""
	}
	return name
}

// findBlob returns key when it exists, else the only blob under prefix
// (an input stored under another name than the field says).
func (j *jobRun) findBlob(ctx context.Context, key, prefix string) (string, error) {
	_, err := j.r.cfg.Blobs.Stat(ctx, key)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return "", infra(err)
	}
	list, err := j.r.cfg.Blobs.List(ctx, prefix)
	if err != nil {
		return "", infra(err)
	}
	if len(list) == 1 {
		return list[0].Key, nil
	}
	return "", fmt.Errorf("%w: %s", ErrInputMissing, path.Base(key))
}

// local returns a local path of a blob: in place for a local folder,
// else a temporary copy.
func (j *jobRun) local(ctx context.Context, key string) (string, error) {
	if lp, ok := j.r.cfg.Blobs.(localPather); ok {
		p, err := lp.LocalPath(key)
		if err != nil {
			return "", infra(err)
		}
		return p, nil
	}
	rc, _, err := j.r.cfg.Blobs.Open(ctx, key)
	if err != nil {
		return "", infra(err)
	}
	defer rc.Close()
	f, err := os.CreateTemp(j.r.cfg.TempDir, "audiopost-in-*-"+path.Base(key))
	if err != nil {
		return "", infra(err)
	}
	j.temps = append(j.temps, f.Name())
	_, err = io.Copy(f, rc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", infra(fmt.Errorf("copying %s: %w", key, err))
	}
	return f.Name(), nil
}

// checkCredits refuses a production whose main input is longer than the
// owner's remaining credits, before spending any processing on it. Intros
// and outros are charged too but not checked: they are short, and the
// final charge takes at most what is left (see charge).
func (j *jobRun) checkCredits(ctx context.Context, p *production.Production, in engine.Inputs) error {
	if j.r.cfg.NoCharge {
		return nil
	}
	u, err := j.r.cfg.Store.GetUser(ctx, j.job.Owner)
	if err != nil {
		return infra(err)
	}
	info, err := audio.ProbeFile(ctx, in.Main)
	if err != nil {
		// The engine reports an unreadable input in its own words.
		return nil
	}
	need := time.Duration(math.Ceil(max(info.Length, 0))) * time.Second
	if have := u.Credits(); have < need || have <= 0 {
		return &creditsError{need: need, have: have}
	}
	return nil
}

// sideBlobs stores what the engine returned beside the output files: the
// waveform image (unless a waveform output already is one) and a cover
// found embedded in the input.
func (j *jobRun) sideBlobs(ctx context.Context, p *production.Production, res *engine.Result) error {
	hasWaveform := false
	for i, o := range p.OutputFiles {
		if o.Format == "waveform" && o.Size != nil {
			hasWaveform = true
			p.WaveformImage = p.OutputFilename(i)
		}
	}
	if !hasWaveform && len(res.Waveform) > 0 {
		if err := putBlob(ctx, j.r.cfg.Blobs, production.OutputKey(p.UUID, WaveformName), res.Waveform); err != nil {
			return err
		}
		p.WaveformImage = WaveformName
	}
	if len(res.LoudnessChart) > 0 {
		if err := putBlob(ctx, j.r.cfg.Blobs, production.OutputKey(p.UUID, LoudnessChartName), res.LoudnessChart); err != nil {
			return err
		}
		p.LoudnessImage = LoudnessChartName
	}
	if res.Cover != nil && p.Image == nil && j.r.cfg.BaseURL != "" {
		name := "cover" + production.ImageExt(res.Cover.MIMEType)
		if err := putBlob(ctx, j.r.cfg.Blobs, production.ImageKey(p.UUID, name), res.Cover.Data); err != nil {
			return err
		}
		if len(res.Thumbnail) > 0 {
			if err := putBlob(ctx, j.r.cfg.Blobs, production.ThumbnailKey(p.UUID, name), res.Thumbnail); err != nil {
				return err
			}
		}
		base := strings.TrimSuffix(j.r.cfg.BaseURL, "/") + "/api/download/audio-upload/" + url.PathEscape(p.UUID) + "/"
		img, thumb := base+url.PathEscape(name), base+url.PathEscape(production.ThumbnailName(name))
		p.Image, p.Thumbnail = &img, &thumb
	}
	return nil
}

func putBlob(ctx context.Context, b storage.Blobs, key string, data []byte) error {
	w, err := b.Create(ctx, key)
	if err != nil {
		return infra(err)
	}
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		w.Abort()
		return infra(err)
	}
	return infra(w.Close())
}

// end records the outcome of the run (see Runner).
func (j *jobRun) end(ctx context.Context, p *production.Production, runErr error, results ...*engine.Result) error {
	st := j.r.cfg.Store
	bctx, cancel := bg(ctx)
	defer cancel()
	var ie *infraError
	switch {
	case errors.Is(context.Cause(ctx), storage.ErrLeaseLost):
		return j.leaseLost(bctx)
	case ctx.Err() != nil:
		// Shutdown: hand the job back untouched.
		err := st.WithTx(bctx, func(tx storage.Tx) error {
			if err := tx.SetStatus(bctx, j.job.Owner, storage.KindProduction, j.job.Production, int(production.StatusWaiting)); err != nil {
				return err
			}
			return tx.Release(bctx, j.lease)
		})
		j.log.Info("job released at shutdown", "err", err)
		if errors.Is(err, storage.ErrLeaseLost) || errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		return err
	case errors.As(runErr, &ie):
		return j.retry(bctx, p, runErr)
	}
	var res *engine.Result
	if len(results) > 0 {
		res = results[0]
	}
	if runErr != nil && p == nil {
		return j.retry(bctx, p, runErr)
	}
	err := st.WithTx(bctx, func(tx storage.Tx) error {
		// Completing first makes the transaction fail on a lost lease, so
		// the result commits at most once per job.
		if err := tx.Complete(bctx, j.lease); err != nil {
			return err
		}
		cur, err := tx.GetResource(bctx, j.job.Owner, storage.KindProduction, j.job.Production)
		if err != nil {
			return err
		}
		if p.Status == production.StatusDone && !j.r.cfg.NoCharge {
			if err := j.charge(bctx, tx, p); err != nil {
				return err
			}
		}
		doc, err := production.EncodeDocument(p)
		if err != nil {
			return err
		}
		cur.Doc, cur.Status = doc, int(p.Status)
		if err := tx.UpdateResource(bctx, &cur); err != nil {
			return err
		}
		if j.r.cfg.OnFinished != nil {
			return j.r.cfg.OnFinished(bctx, tx, j.job.Owner, p)
		}
		return nil
	})
	switch {
	case errors.Is(err, storage.ErrLeaseLost):
		return j.leaseLost(bctx)
	case errors.Is(err, storage.ErrNotFound):
		// Deleted while processing: drop the result.
		st.Complete(bctx, j.lease)
		return nil
	case err != nil:
		return j.retry(bctx, p, infra(err))
	}
	j.processed(p)
	if p.Status == production.StatusDone && res != nil {
		j.pruneOutputs(bctx, p, res)
	}
	j.log.Info("job finished", "status", p.Status, "error", p.ErrorMessage)
	return nil
}

// charge takes the production's used credits from its owner, in the
// result transaction. The up-front check leaves a gap (intros, several
// productions of one account at once): a charge larger than the balance
// takes what is left rather than failing a finished production.
func (j *jobRun) charge(ctx context.Context, tx storage.Tx, p *production.Production) error {
	u, err := tx.GetUser(ctx, j.job.Owner)
	if err != nil {
		return err
	}
	d := min(creditsDuration(p.UsedCredits.Combined), u.Credits())
	after, err := tx.Charge(ctx, j.job.Owner, d)
	if err != nil {
		return err
	}
	p.UsedCredits.Recurring = (u.RecurringCredits - after.RecurringCredits).Hours()
	p.UsedCredits.Onetime = (u.OnetimeCredits - after.OnetimeCredits).Hours()
	return nil
}

// retry fails the job for another attempt after an infrastructure error;
// after the last attempt the production ends in Error.
func (j *jobRun) retry(ctx context.Context, p *production.Production, cause error) error {
	st := j.r.cfg.Store
	var (
		retried bool
		final   *production.Production // the production as it ended in Error
	)
	err := st.WithTx(ctx, func(tx storage.Tx) error {
		var err error
		retried, err = tx.Fail(ctx, j.lease, cause.Error(), j.r.retryAfter(j.job.Attempts))
		if err != nil {
			return err
		}
		if retried {
			return tx.SetStatus(ctx, j.job.Owner, storage.KindProduction, j.job.Production, int(production.StatusWaiting))
		}
		cur, err := tx.GetResource(ctx, j.job.Owner, storage.KindProduction, j.job.Production)
		if err != nil {
			return err
		}
		q, err := production.DecodeDocument(cur)
		if err != nil {
			// An unreadable document cannot carry the message.
			return tx.SetStatus(ctx, j.job.Owner, storage.KindProduction, j.job.Production, int(production.StatusError))
		}
		q.Fail(production.Status(cur.Status), production.ErrorInternal,
			"the service failed (its storage), processing gave up after several attempts: "+cause.Error())
		doc, err := production.EncodeDocument(q)
		if err != nil {
			return err
		}
		cur.Doc, cur.Status = doc, int(q.Status)
		if err := tx.UpdateResource(ctx, &cur); err != nil {
			return err
		}
		final = q
		if j.r.cfg.OnFinished != nil {
			return j.r.cfg.OnFinished(ctx, tx, j.job.Owner, q)
		}
		return nil
	})
	if errors.Is(err, storage.ErrLeaseLost) {
		return j.leaseLost(ctx)
	}
	if err != nil {
		return fmt.Errorf("job %d: recording failure %q: %w", j.job.ID, cause, err)
	}
	if !retried && final != nil {
		j.processed(final)
	}
	j.log.Warn("job failed", "retry", retried, "err", cause)
	return nil
}

// processed reports a stored final status to Config.OnProcessed.
func (j *jobRun) processed(p *production.Production) {
	if f := j.r.cfg.OnProcessed; f != nil && p.Status.Finished() {
		f(p.Status, p.Length, j.took)
	}
}

// leaseLost ends a run whose lease is gone. A stopping job held under
// this lease was stopped: this run ends it (stopped). A canceled one was
// stopped too, and ended by the API: a production still in Stopping goes
// to Not Started (Engine.Run's status for a cancelled run). A lease taken
// by another worker leaves everything to that worker.
func (j *jobRun) leaseLost(ctx context.Context) error {
	st := j.r.cfg.Store
	job, err := st.GetJob(ctx, j.job.ID)
	if err != nil {
		return fmt.Errorf("job %d after losing its lease: %w", j.job.ID, err)
	}
	switch {
	case job.State == storage.JobStopping && job.Lease() == j.lease:
		return j.stopped(ctx)
	case job.State != storage.JobCanceled:
		j.log.Warn("job lease lost", "state", job.State, "holder", job.Worker)
		return nil
	}
	err = st.WithTx(ctx, func(tx storage.Tx) error { return j.notStarted(ctx, tx) })
	if errors.Is(err, storage.ErrNotFound) {
		err = nil
	}
	j.log.Info("job stopped", "err", err)
	return err
}

// stopped honours the stop of the stopping job held under j.lease: the
// production goes from Stopping to Not Started and the job ends canceled,
// together.
func (j *jobRun) stopped(ctx context.Context) error {
	err := j.r.cfg.Store.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.Stopped(ctx, j.lease); err != nil {
			return err
		}
		err := j.notStarted(ctx, tx)
		if errors.Is(err, storage.ErrNotFound) {
			return nil // deleted meanwhile
		}
		return err
	})
	if errors.Is(err, storage.ErrLeaseLost) {
		j.log.Warn("stopped job taken over", "err", err)
		return nil
	}
	j.log.Info("job stopped", "err", err)
	return err
}

// notStarted sets a production still in Stopping to Not Started; one in
// another status (started again since) is left alone.
func (j *jobRun) notStarted(ctx context.Context, tx storage.Tx) error {
	cur, err := tx.GetResource(ctx, j.job.Owner, storage.KindProduction, j.job.Production)
	if err != nil {
		return err
	}
	if production.Status(cur.Status) != production.StatusStopping {
		return nil
	}
	return tx.SetStatus(ctx, j.job.Owner, storage.KindProduction, j.job.Production, int(production.StatusNotStarted))
}

// pruneOutputs removes output blobs an earlier run made that this one did
// not (a renamed output, a dropped format).
func (j *jobRun) pruneOutputs(ctx context.Context, p *production.Production, res *engine.Result) {
	keep := map[string]bool{production.OutputKey(p.UUID, WaveformName): p.WaveformImage == WaveformName,
		production.OutputKey(p.UUID, LoudnessChartName): p.LoudnessImage == LoudnessChartName}
	for _, f := range res.Files {
		keep[production.OutputKey(p.UUID, f.Name)] = true
	}
	list, err := j.r.cfg.Blobs.List(ctx, OutputPrefix(p.UUID))
	if err != nil {
		return
	}
	for _, b := range list {
		if !keep[b.Key] {
			j.r.cfg.Blobs.Delete(ctx, b.Key)
		}
	}
}

// OutputPrefix is the folder of a production's output files.
func OutputPrefix(uuid string) string { return production.ProductionPrefix(uuid) + "output/" }

// recognizer builds the recognizer of the speech recognition service
// uuid of the job's owner. A service that cannot be used gives a
// recognizer that fails with the reason, so that the engine names it in
// the production's warning and still makes the audio.
func (j *jobRun) recognizer(ctx context.Context, uuid string) speech.Recognizer {
	svc, err := j.r.cfg.Store.GetService(ctx, j.job.Owner, uuid)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			err = fmt.Errorf("the speech recognition service %s no longer exists", uuid)
		}
		return failedRecognizer{err}
	}
	rec, err := services.Recognizer(svc, j.r.cfg.Transfer)
	if err != nil {
		return failedRecognizer{fmt.Errorf("service %q: %w", svc.DisplayName, err)}
	}
	return rec
}

// failedRecognizer is a recognizer that could not be made.
type failedRecognizer struct{ err error }

func (f failedRecognizer) Recognize(context.Context, audio.Source, speech.Options) (*speech.Transcript, error) {
	return nil, f.err
}
