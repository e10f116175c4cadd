package chain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/loudness"
)

// LossyFormats are the API output formats whose decoders can overshoot
// the encoded signal's true peak.
var LossyFormats = map[string]bool{"mp3": true, "mp3-vbr": true, "aac": true, "opus": true, "vorbis": true}

// lossyTolerance is how far above maxpeak a re-decoded lossy output may
// read; lossyAttempts bounds the re-renders.
const (
	lossyTolerance = 0.15
	lossyAttempts  = 4
)

// EncodeFile renders the pipeline for cfg into path in the API output
// format (via audio.NewEncoder; the codecs must be registered). The file
// is written under a temporary name and renamed when complete. Lossy
// outputs get LossyHeadroom, are decoded again and measured, and are
// re-rendered with more headroom until the decoded true peak is within
// maxpeak + 0.15 dB; the statistics then report the decoded output's true
// peak (what listeners get). progress, if not nil, is called with the
// fraction done after each block of each render.
func EncodeFile(ctx context.Context, open Opener, cfg Config, format, path string, opts audio.EncodeOptions, progress func(float64)) (Stats, error) {
	cfg.Lossy = cfg.Lossy || LossyFormats[format]
	var st Stats
	for attempt := 0; ; attempt++ {
		var err error
		st, err = renderFile(ctx, open, cfg, format, path, opts, progress)
		if err != nil {
			return st, err
		}
		if !cfg.Lossy {
			return st, nil
		}
		tp, err := decodedTruePeak(ctx, path)
		if err != nil {
			return st, fmt.Errorf("re-measuring %s output: %w", format, err)
		}
		st.Levels.Output.Peak = Value{round2(tp), "dBTP"}
		over := tp - cfg.MaxPeak
		if over <= lossyTolerance {
			return st, nil
		}
		if attempt == lossyAttempts-1 {
			st.Warnings = append(st.Warnings, fmt.Sprintf("maxpeak %.1f dBTP not met after %s encoding: decoded true peak %.2f dBTP", cfg.MaxPeak, format, tp))
			return st, nil
		}
		h := cfg.LossyHeadroomDB
		if h <= 0 {
			h = LossyHeadroom
		}
		cfg.LossyHeadroomDB = h + over + 0.1
	}
}

func renderFile(ctx context.Context, open Opener, cfg Config, format, path string, opts audio.EncodeOptions, progress func(float64)) (Stats, error) {
	p, err := New(ctx, open, cfg)
	if err != nil {
		return Stats{}, err
	}
	defer p.Close()
	tmp := path + ".part"
	f, err := os.Create(tmp)
	if err != nil {
		return Stats{}, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	enc, err := audio.NewEncoder(ctx, format, f, p.Format(), opts)
	if err != nil {
		return Stats{}, err
	}
	buf := audio.NewBuffer(p.Format().Channels, audio.DefaultBlock)
	view := make(audio.Buffer, len(buf))
	total := float64(max(p.Frames(), 1))
	var done int64
	for {
		n, err := p.Read(buf)
		if n > 0 {
			if werr := enc.Write(buf.SliceInto(view, 0, n)); werr != nil {
				enc.Close()
				return Stats{}, werr
			}
			done += int64(n)
			if progress != nil {
				progress(min(1, float64(done)/total))
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			enc.Close()
			return Stats{}, err
		}
	}
	if err := enc.Close(); err != nil {
		return Stats{}, err
	}
	if err := f.Close(); err != nil {
		return Stats{}, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return Stats{}, err
	}
	ok = true
	return p.Stats(), nil
}

func decodedTruePeak(ctx context.Context, path string) (float64, error) {
	d, err := audio.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	r, err := loudness.Measure(ctx, d, loudness.Options{Mode: loudness.ModeTruePeak})
	if err != nil {
		return 0, err
	}
	return r.TruePeak, nil
}
