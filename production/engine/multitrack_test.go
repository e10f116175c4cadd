package engine_test

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
)

// A podcast recorded on two microphones and a music bed goes in as three
// tracks and comes out as one master. The host and guest microphones each
// carry the other's voice 20 dB down and their own noise; the guest was
// recorded 15 dB quieter, and the guest's file starts 2 s into the
// conversation (offset 2). The bed is a 10 s loop at 44.1 kHz (the mix is
// at 48 kHz) that loop_trim stretches to the conversation. Measured: the
// master's loudness and true peak, the two speakers' levels on their
// processed tracks (the tracks output), where each speaker's activity is
// reported, and the length of everything.
func TestEngineMultitrack(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	// Self-contained (no Setenv): runs beside the other heavy engine tests.
	t.Parallel()
	need.Programs(t, "ffmpeg")
	const rate, bedRate = 48000, 44100
	const guestOffset = 2.0
	// The conversation on the production's timeline.
	var host, guest []float64
	var hostSpans, guestSpans []audio.Span
	pos := rate // one second of lead-in
	for k := range 4 {
		x := testaudio.TrimSilence(testaudio.Speech(t, rate, testaudio.Sentences[k], testaudio.Voices[k%2]), 1e-4)
		sp := audio.Span{Start: int64(pos), End: int64(pos + len(x))}
		if k%2 == 0 {
			hostSpans = append(hostSpans, sp)
		} else {
			guestSpans = append(guestSpans, sp)
		}
		pos += len(x) + rate*8/10
		for len(host) < pos {
			host, guest = append(host, 0), append(guest, 0)
		}
		dst := host
		if k%2 == 1 {
			dst = guest
		}
		copy(dst[sp.Start:], x)
	}
	n := pos + rate
	host, guest = append(host, make([]float64, n-len(host))...), append(guest, make([]float64, n-len(guest))...)
	mic := func(own, other []float64, gainDB float64, seed uint64) []float64 {
		out := testaudio.WhiteNoise(len(own), math.Pow(10, -65.0/20), seed)
		g, b := math.Pow(10, gainDB/20), math.Pow(10, (gainDB-20)/20)
		for i := range out {
			out[i] += g*own[i] + b*other[i]
		}
		return out
	}
	hostMic := mic(host, guest, -6, 1)
	guestMic := mic(guest, host, -21, 2)[int(guestOffset*rate):]
	bed := testaudio.Scale(testaudio.Music(bedRate, 10, 5), 0.5)

	dir, outDir := t.TempDir(), t.TempDir()
	paths := map[string]string{"host": filepath.Join(dir, "host.wav"), "guest": filepath.Join(dir, "guest.wav"), "bed": filepath.Join(dir, "bed.wav")}
	testaudio.WriteWAVBits(t, paths["host"], [][]float64{hostMic}, rate, 24)
	testaudio.WriteWAVBits(t, paths["guest"], [][]float64{guestMic}, rate, 24)
	testaudio.WriteWAVBits(t, paths["bed"], [][]float64{bed, bed}, bedRate, 16)

	p := newProduction(t, fmt.Sprintf(`{
		"is_multitrack": true, "output_basename": "show",
		"algorithms": {"loudnesstarget": -16, "maxpeak": -1},
		"multi_input_files": [
			{"type": "multitrack", "id": "host", "input_file": "https://example.org/host.wav", "algorithms": {"backforeground": "foreground", "pan": "L10"}},
			{"type": "multitrack", "id": "guest", "input_file": "https://example.org/guest.wav", "offset": %g, "algorithms": {"backforeground": "foreground", "pan": "R10"}},
			{"type": "multitrack", "id": "bed", "input_file": "https://example.org/bed.wav", "algorithms": {"backforeground": "ducking", "loop_trim": true, "backgroundgain": -18}}],
		"output_files": [{"format": "flac"}, {"format": "mp3"}, {"format": "tracks"}, {"format": "stats", "ending": "json"}]}`, guestOffset))
	res, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Multi: paths}, engine.DirWriter{Dir: outDir}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if p.Status != production.StatusDone || p.WarningMessage != "" {
		t.Errorf("status %v, warning %q", p.Status, p.WarningMessage)
	}

	// The master: the conversation's length, at the target, under maxpeak.
	master, mrate := testaudio.ReadFile(t, filepath.Join(outDir, "show.flac"))
	if mrate != rate || len(master) != 2 || master.Frames() != n {
		t.Errorf("master: %d Hz, %d channels, %d frames; want %d Hz stereo, %d frames", mrate, len(master), master.Frames(), rate, n)
	}
	lr, err := loudness.MeasureBuffer(master, mrate, loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("master: %.2f LUFS, true peak %.2f dBTP, %d frames", lr.Integrated, lr.TruePeak, master.Frames())
	if math.Abs(lr.Integrated+16) > 0.3 {
		t.Errorf("master at %.2f LUFS, want -16 within 0.3 LU", lr.Integrated)
	}
	if lr.TruePeak > -1 {
		t.Errorf("master true peak %.2f dBTP, want at most -1", lr.TruePeak)
	}
	if mp3, _ := testaudio.ReadFile(t, filepath.Join(outDir, "show.mp3")); mp3.Frames() < n-rate/10 {
		t.Errorf("mp3 master has %d frames, want about %d", mp3.Frames(), n)
	}

	// The tracks: aligned with the master; the speakers 15 dB apart at
	// the input come out within 1 dB of each other.
	tracks := unzipTracks(t, filepath.Join(outDir, "show.flac.zip"))
	for _, id := range []string{"host", "guest", "bed"} {
		b, ok := tracks[id+".flac"]
		if !ok {
			t.Fatalf("tracks output lacks %s.flac (has %v)", id, keys(tracks))
		}
		if id != "bed" && b.Frames() < n-1 {
			t.Errorf("track %s has %d frames, want %d (aligned with the master)", id, b.Frames(), n)
		}
	}
	hostLv := dialogLevel(t, tracks["host.flac"], hostSpans, rate)
	guestLv := dialogLevel(t, tracks["guest.flac"], guestSpans, rate)
	t.Logf("speakers on their processed tracks: host %.2f LUFS, guest %.2f LUFS", hostLv, guestLv)
	if math.Abs(hostLv-guestLv) > 1 {
		t.Errorf("host and guest %.2f LU apart, want within 1", hostLv-guestLv)
	}

	// Statistics: every track by its identifier, activity where each
	// speaker talks on the production's timeline, the master's levels.
	st := p.Statistics
	if st.Master == nil || len(st.Tracks) != 3 || st.Levels != nil {
		t.Fatalf("statistics: master %v, %d tracks, single-track levels %v", st.Master, len(st.Tracks), st.Levels)
	}
	if got := st.Master.Levels.Loudness.Value; math.Abs(got-lr.Integrated) > 0.1 {
		t.Errorf("master.levels.loudness %.2f, measured %.2f", got, lr.Integrated)
	}
	for k, c := range []struct {
		id    string
		spans []audio.Span
	}{{"host", hostSpans}, {"guest", guestSpans}} {
		ts := st.Tracks[k]
		if ts.Identifier != c.id || len(ts.Activity) == 0 {
			t.Errorf("track %d: identifier %q, activity %v", k, ts.Identifier, ts.Activity)
			continue
		}
		first := float64(c.spans[0].Start) / rate
		if d := ts.Activity[0][0] - first; math.Abs(d) > 0.15 {
			t.Errorf("%s: activity starts at %.2f s, the first phrase at %.2f s", c.id, ts.Activity[0][0], first)
		}
		last := float64(c.spans[len(c.spans)-1].End) / rate
		if d := ts.Activity[len(ts.Activity)-1][1] - last; math.Abs(d) > 0.3 {
			t.Errorf("%s: activity ends at %.2f s, the last phrase at %.2f s", c.id, ts.Activity[len(ts.Activity)-1][1], last)
		}
		if g := ts.Levels.GainMean.Value; k == 1 && g < st.Tracks[0].Levels.GainMean.Value+10 {
			t.Errorf("guest gain %.1f dB, host %.1f dB: the quieter guest should be raised about 15 dB more", g, st.Tracks[0].Levels.GainMean.Value)
		}
	}
	if st.Tracks[2].Identifier != "bed" {
		t.Errorf("third track %q", st.Tracks[2].Identifier)
	}
	if p.MultiInputFiles[2].InputSampleRate != bedRate || p.MultiInputFiles[1].InputLength < 1 {
		t.Errorf("track properties: %+v", p.MultiInputFiles)
	}
	if testing.Verbose() {
		data, _ := os.ReadFile(filepath.Join(outDir, "show.json"))
		t.Logf("%s", data)
	}
	if len(res.Files) != 4 {
		t.Errorf("files %v", res.Files)
	}
}

// dialogLevel is the loudness of b over the spans.
func dialogLevel(t *testing.T, b audio.Buffer, spans []audio.Span, rate int) float64 {
	t.Helper()
	r, err := loudness.MeasureBuffer(b, rate, loudness.Options{Mode: loudness.ModeI, Speech: spans})
	if err != nil {
		t.Fatal(err)
	}
	return r.Dialog
}

// unzipTracks decodes every file of a tracks output.
func unzipTracks(t *testing.T, path string) map[string]audio.Buffer {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := map[string]audio.Buffer{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(t.TempDir(), f.Name)
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out[f.Name], _ = testaudio.ReadFile(t, tmp)
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
