package engine_test

import (
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production/engine"
)

// decodeOnceRequest has an intro, a lossy output the verification
// decodes (and may render again) and a lossless one: every pass over the
// inputs the engine makes.
const decodeOnceRequest = `{"input_file": "https://example.org/talk.opus", "output_basename": "talk",
	"algorithms": {"loudnesstarget": -16, "maxpeak": -1},
	"multi_input_files": [{"id": "in", "type": "intro", "input_file": "https://example.org/intro.opus"}],
	"output_files": [{"format": "mp3"}, {"format": "flac"}]}`

// TestInputsDecodedOnce runs one production twice: from Opus inputs, which
// ffmpeg decodes, and from WAV files holding the very samples ffmpeg
// decodes from them (32-bit float), which need no program. The Opus run
// may start one ffprobe and one ffmpeg per input more than the WAV run,
// however many passes the engine makes over them (probe, analysis,
// render, the lossy verification's render, the intro's level), and
// writes the same audio (TestDecodedInputIsFFmpegs checks the samples
// exactly). Each start of ffmpeg or ffprobe costs 0.1-0.15 s
// of CPU before any audio: an Opus input probed and decoded on every
// pass cost 10 of each (issue 34).
func TestInputsDecodedOnce(t *testing.T) {
	dir := t.TempDir()
	talk := opusInput(t, dir, "talk", 2)
	intro := opusInput(t, dir, "intro", 1)
	asWAV := func(in string) string {
		out := in[:len(in)-len(filepath.Ext(in))] + "-decoded.wav"
		run(t, "ffmpeg", "-nostdin", "-v", "error", "-i", in, "-c:a", "pcm_f32le", "-y", out)
		return out
	}
	type starts struct{ ffprobe, ffmpeg int }
	runOn := func(main, intro string) (starts, audio.Buffer) {
		t.Helper()
		pool := procpool.New(procpool.Config{Size: 16, Logger: slog.New(slog.DiscardHandler)})
		tmp := t.TempDir()
		eng := &engine.Engine{Processes: pool, Logger: slog.New(slog.DiscardHandler), TempDir: tmp}
		p := newProduction(t, decodeOnceRequest)
		out := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := eng.Run(ctx, p, engine.Inputs{Main: main, Multi: map[string]string{"in": intro}}, engine.DirWriter{Dir: out}, nil)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(main), err)
		}
		if left := listDir(t, tmp); len(left) > 0 {
			t.Errorf("%s: the run left %q in its TempDir", filepath.Base(main), left)
		}
		var flac audio.Buffer
		for _, f := range res.Files {
			if filepath.Ext(f.Name) == ".flac" {
				flac, _ = testaudio.ReadFile(t, filepath.Join(out, f.Name))
			}
		}
		return starts{pool.Starts("ffprobe"), pool.Starts("ffmpeg")}, flac
	}
	opus, opusAudio := runOn(talk, intro)
	wav, wavAudio := runOn(asWAV(talk), asWAV(intro))
	t.Logf("programs started: Opus inputs %+v, WAV inputs %+v", opus, wav)
	if d := opus.ffprobe - wav.ffprobe; d > 2 {
		t.Errorf("two Opus inputs cost %d ffprobe runs, want one each", d)
	}
	if d := opus.ffmpeg - wav.ffmpeg; d > 2 {
		t.Errorf("two Opus inputs cost %d ffmpeg runs, want one each", d)
	}
	// Their samples are the same, not their Info: the chain plans its
	// passes by the input's format and stated length, so the two runs
	// may round differently, by a step of the 16-bit FLAC at most.
	if len(opusAudio) == 0 || len(opusAudio) != len(wavAudio) || opusAudio.Frames() != wavAudio.Frames() {
		t.Fatalf("the FLAC outputs have %d and %d frames", opusAudio.Frames(), wavAudio.Frames())
	}
	var most float64
	for c := range opusAudio {
		for i, v := range opusAudio[c] {
			most = max(most, math.Abs(v-wavAudio[c][i]))
		}
	}
	if most > 1.0/(1<<15) {
		t.Errorf("the FLAC outputs differ by up to %.3g (%.1f dBFS): the decoded Opus inputs are not the samples ffmpeg gives", most, 20*math.Log10(most))
	}
}

// TestInputProbedOnce: the uses of one input that ffprobe describes (its
// decode, the remux of its video into the "video" output, the extraction
// of its embedded cover) share one ffprobe run in a production
// (ffmpeg.Probes, which Run carries), and the production's input
// properties are the probe's. Before the memo a video input was probed
// twice and an M4A with a cover twice.
func TestInputProbedOnce(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	wav := filepath.Join(dir, "talk.wav")
	testaudio.WriteWAV(t, wav, testaudio.SpeechLike(48000, 1, 0.05), 48000)
	video := filepath.Join(dir, "clip.mp4")
	run(t, "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=1", "-i", wav,
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "-y", video)
	cover := filepath.Join(dir, "cover.jpg")
	run(t, "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=red:size=32x32", "-frames:v", "1", "-y", cover)
	withCover := filepath.Join(dir, "talk.m4a")
	run(t, "ffmpeg", "-nostdin", "-v", "error", "-i", wav, "-i", cover, "-map", "0:a", "-map", "1:v", "-c:v", "copy",
		"-disposition:v", "attached_pic", "-c:a", "aac", "-y", withCover)
	for _, tc := range []struct{ name, input, request string }{
		{"video", video, `{"input_file": "https://example.org/clip.mp4", "output_files": [{"format": "video"}]}`},
		{"cover", withCover, `{"input_file": "https://example.org/talk.m4a", "output_files": [{"format": "flac"}]}`},
	} {
		pool := procpool.New(procpool.Config{Size: 4, Logger: slog.New(slog.DiscardHandler)})
		eng := &engine.Engine{Processes: pool, Logger: slog.New(slog.DiscardHandler), TempDir: t.TempDir()}
		p := newProduction(t, tc.request)
		res, err := eng.Run(t.Context(), p, engine.Inputs{Main: tc.input}, engine.DirWriter{Dir: t.TempDir()}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n := pool.Starts("ffprobe"); n != 1 {
			t.Errorf("%s: ffprobe ran %d times, want once", tc.name, n)
		}
		// The input's properties are the probe's, exact (what ffmpeg
		// prints of an input is rounded: ffmpeg.Decode without a memo).
		info, err := audio.ProbeFile(t.Context(), tc.input)
		if err != nil {
			t.Fatal(err)
		}
		if p.InputLength != info.Length || p.Bitrate != info.Bitrate {
			t.Errorf("%s: input length %v s, bitrate %v kbps; the probe's %v, %v", tc.name, p.InputLength, p.Bitrate, info.Length, info.Bitrate)
		}
		if tc.name == "cover" && res.Cover == nil {
			t.Errorf("cover: the input's cover was not extracted")
		}
	}
}

// TestVerifiedFromFileOneProgram: where the pool has no room for an
// encoder's monitor, a lossy output is verified by decoding the finished
// file, and that decode is one ffmpeg run, without ffprobe (it needs the
// samples, not the file's Info).
func TestVerifiedFromFileOneProgram(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	wav := filepath.Join(t.TempDir(), "talk.wav")
	testaudio.WriteWAV(t, wav, testaudio.SpeechLike(48000, 2, 0.05), 48000)
	pool := procpool.New(procpool.Config{Size: 1, Logger: slog.New(slog.DiscardHandler)})
	eng := &engine.Engine{Processes: pool, Logger: slog.New(slog.DiscardHandler), TempDir: t.TempDir()}
	p := newProduction(t, `{"input_file": "https://example.org/talk.wav", "algorithms": {"loudnesstarget": -16, "maxpeak": -1},
		"output_files": [{"format": "opus"}]}`)
	if _, err := eng.Run(t.Context(), p, engine.Inputs{Main: wav}, engine.DirWriter{Dir: t.TempDir()}, nil); err != nil {
		t.Fatal(err)
	}
	if pr, m := pool.Starts("ffprobe"), pool.Starts("ffmpeg"); pr != 0 || m < 2 {
		t.Errorf("ffprobe %d, ffmpeg %d runs: want no ffprobe, the encoder and the verifying decode", pr, m)
	}
}
