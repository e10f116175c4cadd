package livestream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// State is where a stored live stream is in its life; it is the stored
// resource's status.
type State int

// The states. A started stream is Starting until a worker runs it, then
// Running; Stop makes it Stopped from any state, and a stream that no
// worker could keep running ends in Failed.
const (
	Stopped State = iota
	Starting
	Running
	Failed
)

var stateNames = [...]string{"stopped", "starting", "running", "failed"}

// String returns the state's API name.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// MarshalJSON writes the state's name.
func (s State) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads a state's name.
func (s *State) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return err
	}
	for i, n := range stateNames {
		if n == name {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("livestream: unknown state %q", name)
}

// LiveStream is a stored live stream, a resource of its owner: where it
// reads, where it sends and how it processes.
type LiveStream struct {
	UUID         string        `json:"uuid"`
	Name         string        `json:"name"`
	Source       string        `json:"source"`
	Destinations []Destination `json:"destinations"`
	// Fallback is played while the source is down (silence without).
	Fallback string `json:"fallback,omitempty"`
	// Preset is the preset whose algorithms were taken when the stream
	// was created; Algorithms are the resolved settings (the preset's with
	// the request's over them).
	Preset     string                     `json:"preset,omitempty"`
	Algorithms production.AlgorithmValues `json:"algorithms"`
	// Warnings name the settings the live graph does not apply.
	Warnings []string  `json:"warnings,omitempty"`
	State    State     `json:"state"`
	Error    string    `json:"error,omitempty"`
	Created  time.Time `json:"created"`
}

// Input is a request to create a live stream: every field as the client
// sent it.
type Input struct {
	Name         string                   `json:"name"`
	Source       string                   `json:"source"`
	Destinations []Destination            `json:"destinations"`
	Fallback     string                   `json:"fallback"`
	Preset       string                   `json:"preset"`
	Algorithms   production.RawAlgorithms `json:"algorithms"`
}

// Errors of the live stream operations, for errors.Is.
var (
	// ErrState means the stream is not in a state the operation applies
	// to (starting a running stream).
	ErrState = errors.New("livestream: not possible in the stream's state")
)

// Service holds the operations on stored live streams. Each takes the
// acting user, whose streams alone it sees (another user's stream is
// storage.ErrNotFound), and is one transaction where it changes more
// than one record: a started stream has exactly one live job, a stopped
// one none.
type Service struct {
	Store storage.Store
	// CheckURL, when set, vets every address a stream would reach (its
	// source, destinations and fallback) for the server's outbound
	// policy: a server users reach refuses private and loopback
	// addresses. Its error is the field's message.
	CheckURL func(ctx context.Context, rawURL string) error
}

// sourceSchemes and destinationSchemes are the protocols a stream stored
// through the API may use: network ones only, so that no user makes the
// server read or write its own files.
var (
	sourceSchemes      = []string{"http", "https", "rtmp", "rtmps", "srt", "icecast"}
	destinationSchemes = []string{"icecast", "rtmp", "rtmps", "srt", "http", "https"}
)

func (s Service) checkURL(ctx context.Context, raw string, schemes []string, path string, errs production.FieldErrors) {
	if raw == "" {
		errs.Add(path, "required")
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		errs.Add(path, "must be an absolute URL")
		return
	}
	ok := false
	for _, sc := range schemes {
		ok = ok || strings.EqualFold(u.Scheme, sc)
	}
	if !ok {
		errs.Addf(path, "scheme %q is not allowed; use one of %s", u.Scheme, strings.Join(schemes, ", "))
		return
	}
	if s.CheckURL != nil {
		if err := s.CheckURL(ctx, raw); err != nil {
			errs.Add(path, err.Error())
		}
	}
}

// Create validates in and stores the new live stream of owner, stopped.
// Problems are production.FieldErrors (the API's form_errors), one per
// field: "source", "destinations.N.url", "destinations.N.format",
// "preset", "algorithms.KEY".
func (s Service) Create(ctx context.Context, owner string, in Input) (*LiveStream, error) {
	errs := production.FieldErrors{}
	s.checkURL(ctx, in.Source, sourceSchemes, "source", errs)
	if len(in.Destinations) == 0 {
		errs.Add("destinations", "at least one destination is required")
	}
	for i, d := range in.Destinations {
		p := fmt.Sprintf("destinations.%d", i)
		s.checkURL(ctx, d.URL, destinationSchemes, p+".url", errs)
		if !validFormat(d.Format) {
			errs.Addf(p+".format", "%q is not allowed; choose one of %s", d.Format, strings.Join(ffmpeg.LiveFormats(), ", "))
		}
		if d.Bitrate < 0 || d.Bitrate > 1024 {
			errs.Add(p+".bitrate", "must be 0 (the format's default) to 1024 kbps")
		}
	}
	if in.Fallback != "" {
		s.checkURL(ctx, in.Fallback, []string{"http", "https"}, "fallback", errs)
	}
	if len(in.Name) > 200 {
		errs.Add("name", "at most 200 characters")
	}
	values := production.AlgorithmValues{}
	if in.Preset != "" {
		r, err := s.Store.GetResource(ctx, owner, storage.KindPreset, in.Preset)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			errs.Add("preset", "no such preset")
		case err != nil:
			return nil, err
		default:
			pr, err := preset.DecodeDocument(r)
			if err != nil {
				return nil, err
			}
			values = pr.Algorithms.Clone()
		}
	}
	if in.Algorithms != nil {
		values = values.Merge(production.ParseAlgorithms(in.Algorithms, "algorithms", errs))
	}
	_, warnings, err := Config(values)
	var fe production.FieldErrors
	switch {
	case errors.As(err, &fe):
		errs.Merge("", fe)
	case err != nil:
		errs.Add("algorithms", err.Error())
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	ls := &LiveStream{Name: in.Name, Source: in.Source, Destinations: in.Destinations, Fallback: in.Fallback,
		Preset: in.Preset, Algorithms: values, Warnings: warnings}
	doc, err := json.Marshal(ls)
	if err != nil {
		return nil, err
	}
	res := &storage.Resource{Owner: owner, Kind: storage.KindLiveStream, Doc: doc, Status: int(Stopped)}
	if err := s.Store.CreateResource(ctx, res); err != nil {
		return nil, err
	}
	ls.UUID, ls.Created = res.UUID, res.Created
	return ls, nil
}

// decode turns a stored resource into its LiveStream.
func decode(r storage.Resource) (*LiveStream, error) {
	ls := &LiveStream{}
	if err := json.Unmarshal(r.Doc, ls); err != nil {
		return nil, fmt.Errorf("live stream %s: stored document: %w", r.UUID, err)
	}
	ls.UUID, ls.State, ls.Created = r.UUID, State(r.Status), r.Created
	return ls, nil
}

// Get returns owner's live stream id.
func (s Service) Get(ctx context.Context, owner, id string) (*LiveStream, error) {
	r, err := s.Store.GetResource(ctx, owner, storage.KindLiveStream, id)
	if err != nil {
		return nil, err
	}
	return decode(r)
}

// List returns owner's live streams, newest first.
func (s Service) List(ctx context.Context, owner string, limit, offset int) ([]*LiveStream, error) {
	rs, err := s.Store.ListResources(ctx, owner, storage.KindLiveStream, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]*LiveStream, 0, len(rs))
	for _, r := range rs {
		ls, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, ls)
	}
	return out, nil
}

// liveAttempts is how often a live stream's job may be claimed: every
// worker death costs one, and a stream should outlive many.
const liveAttempts = 1000

// Start starts owner's stopped (or failed) live stream id: it becomes
// Starting with its job queued, in one transaction; a worker then runs
// it. Starting a stream that is starting or running is ErrState.
func (s Service) Start(ctx context.Context, owner, id string) (*LiveStream, error) {
	var ls *LiveStream
	err := s.Store.WithTx(ctx, func(tx storage.Tx) error {
		r, err := tx.GetResource(ctx, owner, storage.KindLiveStream, id)
		if err != nil {
			return err
		}
		if st := State(r.Status); st == Starting || st == Running {
			return fmt.Errorf("%w: the stream is %s", ErrState, st)
		}
		if ls, err = decode(r); err != nil {
			return err
		}
		// A new start forgets why the last run failed.
		ls.Error = ""
		if r.Doc, err = json.Marshal(ls); err != nil {
			return err
		}
		r.Status = int(Starting)
		if err := tx.UpdateResource(ctx, &r); err != nil {
			return err
		}
		ls.State = Starting
		return tx.Enqueue(ctx, &storage.Job{Owner: owner, Production: id, Type: storage.JobLive, MaxAttempts: liveAttempts})
	})
	return ls, err
}

// Stop stops owner's live stream id, whatever its state: its job is
// canceled (the worker running it notices at its next heartbeat) and it
// becomes Stopped, in one transaction.
func (s Service) Stop(ctx context.Context, owner, id string) (*LiveStream, error) {
	var ls *LiveStream
	err := s.Store.WithTx(ctx, func(tx storage.Tx) error {
		r, err := tx.GetResource(ctx, owner, storage.KindLiveStream, id)
		if err != nil {
			return err
		}
		if _, err := tx.CancelJobs(ctx, owner, id); err != nil {
			return err
		}
		if err := tx.SetStatus(ctx, owner, storage.KindLiveStream, id, int(Stopped)); err != nil {
			return err
		}
		r.Status = int(Stopped)
		ls, err = decode(r)
		return err
	})
	return ls, err
}

// Delete stops and deletes owner's live stream id and its figures.
func (s Service) Delete(ctx context.Context, owner, id string) error {
	return s.Store.WithTx(ctx, func(tx storage.Tx) error {
		if _, err := tx.CancelJobs(ctx, owner, id); err != nil {
			return err
		}
		if err := tx.DeleteLiveFigures(ctx, owner, id); err != nil {
			return err
		}
		return tx.DeleteResource(ctx, owner, storage.KindLiveStream, id)
	})
}

// Report is a live stream with its latest figures.
type Report struct {
	*LiveStream
	// Figures are the worker's latest report (nil before the first).
	Figures *Figures `json:"figures"`
}

// Report returns owner's live stream id with its latest figures.
func (s Service) Report(ctx context.Context, owner, id string) (*Report, error) {
	ls, err := s.Get(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	st := &Report{LiveStream: ls}
	doc, _, err := s.Store.GetLiveFigures(ctx, owner, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return st, nil
	case err != nil:
		return nil, err
	}
	st.Figures = &Figures{}
	if err := json.Unmarshal(doc, st.Figures); err != nil {
		return nil, fmt.Errorf("live stream %s: stored figures: %w", id, err)
	}
	return st, nil
}
