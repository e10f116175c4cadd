package engine

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/chain"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
)

// A multitrack production runs the same pipeline as a single-track one
// (process, intros and outros, one encoding pass, lossy verification,
// side files); only the processing differs. The tracks are decoded, put
// on the first track's sample rate (dsp.Resampler) and handed to
// dsp/mixdown, which analyses them once and plans every gain (gate,
// crossgate, balance, ducking, loop/trim). Its mix then goes through the
// single-track chain with the master's loudness settings only: no
// filter, leveler or compressor (those ran per track), just the loudness
// control (maxlra, maxs, maxm), normalisation and the true-peak limiter.
// The tracks output renders every processed track once more, aligned with
// the master.

// multitrack is the processing state of a multitrack production.
type multitrack struct {
	r      *run
	inputs []*production.MultiInputFile // the tracks, in order
	paths  []string
	rate   int
	// channels of the master: stereo, unless every track is mono and none
	// is panned.
	channels int
	md       *mixdown.Mixdown
	// gainDB is the master's normalisation gain of the latest render.
	gainDB float64
}

// probeTracks reads the properties of every track (setting them on the
// production's multi_input_files) and returns their total length in
// seconds, what the production is charged for besides intros and outros.
func (r *run) probeTracks(ctx context.Context) (float64, error) {
	p := r.p
	mt := &multitrack{r: r, channels: 1}
	var seconds float64
	for i := range p.MultiInputFiles {
		m := &p.MultiInputFiles[i]
		if m.Type != production.InputMultitrack {
			continue
		}
		path, ok := r.in.Multi[m.ID]
		if !ok && m.InputFile == "" {
			p.AddWarning(production.StatusAudioProcessing, fmt.Sprintf("track %s has no file and was left out of the mix", m.ID))
			continue
		}
		if !ok {
			return 0, fmt.Errorf("%w for track %q", ErrNoInput, m.ID)
		}
		d, err := r.open(ctx, path, "track "+m.ID)
		if err != nil {
			return 0, err
		}
		info, f := d.Info(), d.Format()
		d.Close() // the mixdown opens the tracks again
		m.InputChannels, m.InputSampleRate, m.InputBitrate = f.Channels, f.SampleRate, info.Bitrate
		m.InputFiletype, m.InputLength = info.Format, info.Length
		m.InputDecoder = r.decoderOf(path, d)
		if m.InputFiletype == "" {
			m.InputFiletype = info.Container
		}
		seconds += info.Length
		if len(mt.inputs) == 0 {
			// The first track is the production's reference: its rate is
			// the mix's, its tags and cover the production's.
			r.info, r.coverFrom, mt.rate = info, path, f.SampleRate
			p.Metadata.ImportTags(info.Tags)
		}
		if f.Channels > 1 || r.settings.Tracks[m.ID].Panned {
			mt.channels = 2
		}
		mt.inputs = append(mt.inputs, m)
		mt.paths = append(mt.paths, path)
	}
	if len(mt.inputs) == 0 {
		return 0, fmt.Errorf("%w: a multitrack production needs at least one track", ErrNoInput)
	}
	p.SampleRate, p.Channels = mt.rate, mt.channels
	p.Format, p.Bitrate, p.HasVideo = "", 0, false
	r.mt = mt
	return seconds, nil
}

// open returns the opener of track i: a fresh decoder at the mix's rate.
func (mt *multitrack) open(i int) audio.Opener {
	return func(ctx context.Context) (audio.Source, error) {
		d, err := mt.r.open(ctx, mt.paths[i], "track "+mt.inputs[i].ID)
		if err != nil {
			return nil, err
		}
		if d.Format().SampleRate == mt.rate {
			return d, nil
		}
		rs, err := dsp.NewResampler(d, mt.rate, dsp.ResampleOptions{})
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("track %s: %w", mt.inputs[i].ID, err)
		}
		return rs, nil
	}
}

// process is the Processor of a multitrack production. The mixdown's
// analysis runs on the first call only; a render for the lossy
// verification reuses it.
func (mt *multitrack) process(ctx context.Context, job ProcessJob) (*Processed, error) {
	if mt.md == nil {
		s := job.Settings.Mixdown
		s.Tracks = nil
		for i, m := range mt.inputs {
			t := job.Settings.Tracks[m.ID].TrackSettings
			t.Open = mt.open(i)
			s.Tracks = append(s.Tracks, t)
		}
		s.Channels = mt.channels
		var err error
		if mt.md, err = mixdown.New(ctx, s); err != nil {
			return nil, err
		}
		mt.r.expected = mt.md.Frames()
		mt.r.info.Frames = mt.md.Frames()
	}
	cfg := job.Settings.Chain
	cfg.Headroom, cfg.TempDir = job.Headroom, job.TempDir
	pl, err := chain.New(ctx, mt.openMix, cfg)
	if err != nil {
		return nil, err
	}
	mt.gainDB = pl.Stats().Settings.NormalizationGainDB
	return &Processed{
		Source: &closeAtEOF{Source: pl, c: pl},
		Stats: func() ProcessStats {
			ps := chainStats(pl.Stats(), mt.rate)
			ps.Tracks = mt.statistics()
			return ps
		},
		Measured: func() loudness.Result { return pl.Stats().Output },
	}, nil
}

// openMix opens the mix, reporting progress as it is read.
func (mt *multitrack) openMix(ctx context.Context) (audio.Source, error) {
	src, err := mt.md.Open(ctx)
	if err != nil {
		return nil, err
	}
	return &progressSource{Source: src, progress: mt.r.readProgress}, nil
}

// Activity pairs: a track's speaker is active from the first to the last
// Voice frame of a run; pauses shorter than activityGap join their runs,
// and runs shorter than activityMin (clicks, breaths) are not listed.
const (
	activityGap = 500 * time.Millisecond
	activityMin = 250 * time.Millisecond
)

// statistics are the tracks' statistics: levels measured on each input
// (on the mix's rate), the gain from input to master over the track's
// active blocks (balance, ducking, track gain and master normalisation),
// the track's speech and music segments and its activity, in production
// seconds.
func (mt *multitrack) statistics() []production.TrackStatistics {
	an := mt.md.Analysis()
	out := make([]production.TrackStatistics, 0, len(an.Tracks))
	for i, ta := range an.Tracks {
		lv := ta.Block.Loudness
		gmin, gmean, gmax := mt.gains(i)
		ts := production.TrackStatistics{
			Identifier: mt.inputs[i].ID,
			Levels: production.TrackLevels{
				LRA: production.LU(lv.LRA), NoiseLevel: production.DB(lv.NoiseLevel), MaxMomentary: production.LUFS(lv.MaxMomentary),
				SignalLevel: production.DB(lv.SignalLevel), SNR: production.DB(lv.SNR), MaxShortterm: production.LUFS(lv.MaxShortTerm),
				Loudness: production.LUFS(lv.Integrated), GainMin: production.DB(gmin), GainMean: production.DB(gmean), GainMax: production.DB(gmax),
			},
			Activity: activity(ta, an.FrameLen, an.SampleRate),
		}
		if ta.Block.Classes != nil {
			minLen := int64(production.MinMusicSpeechSegment.Seconds() * float64(an.SampleRate))
			for _, seg := range classify.MergeSegments(ta.Block.Classes.Segments, minLen) {
				if seg.End-seg.Start < minLen {
					continue
				}
				ts.MusicSpeech = append(ts.MusicSpeech, production.MusicSpeechSegment{Label: seg.Label.String(),
					Start: frameTime(ta.Offset+seg.Start, an.SampleRate), Stop: frameTime(ta.Offset+seg.End, an.SampleRate)})
			}
		}
		out = append(out, ts)
	}
	return out
}

// gains returns the minimum, mean and maximum gain in dB from track i's
// input to the master, over the 100 ms blocks where its speaker (or its
// music) is active, or over all blocks if it never is.
func (mt *multitrack) gains(i int) (lo, mean, hi float64) {
	ta := mt.md.Analysis().Tracks[i]
	plans := mt.md.Plans(i)
	base := mt.gainDB + mt.trackGain(i)
	bl := int64(ta.Block.BlockLen)
	voiced := ta.Block.Voiced
	any := false
	for _, v := range voiced {
		any = any || v
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	n := 0
	for b := range ta.Block.Energy {
		if any && (b >= len(voiced) || !voiced[b]) {
			continue
		}
		at := int64(b)*bl + bl/2
		g := base + planAt(plans.Balance, at) + planAt(plans.Duck, at)
		lo, hi = math.Min(lo, g), math.Max(hi, g)
		mean += g
		n++
	}
	if n == 0 {
		return base, base, base
	}
	return lo, mean / float64(n), hi
}

// trackGain is track i's gain setting in dB.
func (mt *multitrack) trackGain(i int) float64 {
	return mt.r.settings.Tracks[mt.inputs[i].ID].GainDB
}

// planAt is a gain plan's value at a frame (0 where it has none).
func planAt(p dsp.GainPlan, frame int64) float64 {
	if len(p.DB) == 0 || p.BlockLen <= 0 {
		return 0
	}
	return p.DB[min(int(frame/int64(p.BlockLen)), len(p.DB)-1)]
}

// activity lists a track's active ranges as [start, stop] seconds of the
// production.
func activity(ta *mixdown.TrackAnalysis, flen, rate int) [][2]float64 {
	sec := func(frame int) float64 { return float64(ta.Offset+int64(frame*flen)) / float64(rate) }
	gap := int(activityGap.Seconds() * float64(rate) / float64(flen))
	var runs [][2]int
	for i := 0; i < len(ta.Activity); {
		if ta.Activity[i] != mixdown.Voice {
			i++
			continue
		}
		j := i
		for j < len(ta.Activity) && ta.Activity[j] == mixdown.Voice {
			j++
		}
		if n := len(runs); n > 0 && i-runs[n-1][1] <= gap {
			runs[n-1][1] = j
		} else {
			runs = append(runs, [2]int{i, j})
		}
		i = j
	}
	var out [][2]float64
	for _, r := range runs {
		if a, b := sec(r[0]), sec(r[1]); b-a >= activityMin.Seconds() {
			out = append(out, [2]float64{math.Round(a*1000) / 1000, math.Round(b*1000) / 1000})
		}
	}
	return out
}

// writeTracks writes the tracks output: a ZIP (stored, the audio is
// compressed already or would not gain much) of every processed track as
// a 24-bit FLAC or WAV file named after its identifier. Each track is
// rendered as it enters the mix (filter, restoration, gate, crossgate,
// balance, compressor, loop/trim, ducking) with its gain and the master's
// normalisation gain, and starts with its offset in silence, so the files
// line up with each other and with the master (before intros) in any
// editor. The master's loudness control and limiter act on the sum and
// are not in the tracks; neither is the pan: each track keeps its own
// channels.
func (mt *multitrack) writeTracks(ctx context.Context, output int, name, ending string) error {
	format := "flac"
	if strings.HasPrefix(ending, "wav") {
		format = "wav"
	}
	fh, err := mt.r.create(name, output, kindMain)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(fh.writer())
	used := map[string]bool{}
	for i, m := range mt.inputs {
		entry := production.SanitizeName(m.ID)
		if entry == "" || used[entry] {
			entry = fmt.Sprintf("track%d", i+1)
		}
		used[entry] = true
		if err := mt.writeTrack(ctx, zw, i, entry+"."+format, format, mt.r.tempLimit(output)); err != nil {
			if errors.Is(err, errDiskFull) {
				return mt.r.tempLimitError(output, mt.r.tempLimit(output), err)
			}
			return fmt.Errorf("output %s, track %s: %w", name, m.ID, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("output %s: %w", name, err)
	}
	return fh.finish()
}

// writeTrack renders track i into a temporary file (FLAC and WAV headers
// are completed by seeking back) of at most limit bytes (0: no bound) and
// stores it in the ZIP.
func (mt *multitrack) writeTrack(ctx context.Context, zw *zip.Writer, i int, entry, format string, limit int64) error {
	src, err := mt.md.OpenTrack(ctx, i)
	if err != nil {
		return err
	}
	aligned, err := dsp.NewMix([]dsp.MixInput{{Source: src, GainDB: mt.trackGain(i) + mt.gainDB, Offset: mt.md.Offset(i)}},
		dsp.MixOptions{Channels: src.Format().Channels})
	if err != nil {
		if c, ok := src.(io.Closer); ok {
			c.Close()
		}
		return err
	}
	defer aligned.Close()
	tmp, err := os.CreateTemp(mt.r.e.TempDir, "audiopost-track-*")
	if err != nil {
		return err
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	f := aligned.Format()
	length := time.Duration(float64(mt.md.Offset(i)+mt.md.TrackFrames(i)) / float64(f.SampleRate) * float64(time.Second))
	var out io.Writer = tmp
	if limit > 0 {
		out = &cappedFile{File: tmp, left: limit}
	}
	enc, err := audio.NewEncoder(ctx, format, out, f, audio.EncodeOptions{BitDepth: 24, Length: length, TempDir: mt.r.e.TempDir,
		Tags: audio.Tags{Title: mt.inputs[i].ID}})
	if err != nil {
		return err
	}
	if _, err := audio.Copy(ctx, enc, aligned); err != nil {
		enc.Close()
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: entry, Method: zip.Store, Modified: time.Now()})
	if err != nil {
		return err
	}
	_, err = io.Copy(w, tmp)
	return err
}
