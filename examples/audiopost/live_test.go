package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/internal/conversation"
	"github.com/audiopost/audiopost/internal/icecast"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// recorder reads a mount as a listener does, keeping the first channel.
type recorder struct {
	mu    sync.Mutex
	x     []float64
	first time.Time // when the first frame arrived
	done  chan struct{}
}

func record(ctx context.Context, url string) *recorder {
	r := &recorder{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for ctx.Err() == nil {
			d, err := ffmpeg.OpenLive(ctx, url, ffmpeg.LiveInput{Format: audio.Format{SampleRate: 48000, Channels: 2}})
			if err == nil {
				buf := audio.NewBuffer(2, 4800)
				for {
					n, err := d.Read(buf)
					r.mu.Lock()
					if n > 0 && r.first.IsZero() {
						r.first = time.Now()
					}
					r.x = append(r.x, buf[0][:n]...)
					r.mu.Unlock()
					if err != nil {
						break
					}
				}
				d.Close()
			}
			r.mu.Lock()
			started := !r.first.IsZero()
			r.mu.Unlock()
			if started {
				return // one uninterrupted recording
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return r
}

// envelope is the RMS of every 10 ms of x, less its mean.
func envelope(x []float64) []float64 {
	const hop = 480
	e := make([]float64, len(x)/hop)
	var mean float64
	for i := range e {
		e[i] = testaudio.RMS(x[i*hop : (i+1)*hop])
		mean += e[i] / float64(len(e))
	}
	for i := range e {
		e[i] -= mean
	}
	return e
}

// align returns the recording rec laid out on the programme's frames
// (zeros where it has nothing) and where in the programme it starts. The
// lag is found on 10 ms envelopes for the whole, then again for every
// 10 s of the programme within 5 s of the last one: a listener's decoder
// may drop or repeat a frame now and then, a source that stalled past the
// stream's Stall had fallback silence put in, and a pause measured 20 ms
// off takes in the speech at its edges.
func align(prog, rec []float64) ([]float64, int) {
	const hop, chunk = 480, 1000 // 10 ms, 10 s in envelope frames
	ep, er := envelope(prog), envelope(rec)
	d := testaudio.Lag(ep, er, len(ep))
	out := make([]float64, len(prog))
	prev := d
	for a := 0; a < len(ep); a += chunk {
		b := min(len(ep), a+chunk)
		best, bestC := prev, -1.0
		for dd := prev - 500; dd <= prev+500; dd++ {
			var c float64
			for i := a; i < b; i++ {
				if j := i + dd; j >= 0 && j < len(er) {
					c += ep[i] * er[j]
				}
			}
			if c > bestC {
				best, bestC = dd, c
			}
		}
		for i := a * hop; i < b*hop; i++ {
			if j := i + best*hop; j >= 0 && j < len(rec) {
				out[i] = rec[j]
			}
		}
		prev = best
	}
	return out, -d * hop
}

// liquidsoapPeer runs Liquidsoap on the source mount, through its
// normalize() (the LUFS mode, toward the same target, with our gain range)
// and its limiter at maxpeak, out to mount.
func liquidsoapPeer(t *testing.T, srv *icecast.Server, in, out string, target, maxpeak float64, kbps int) {
	t.Helper()
	liq := need.Program(t, "liquidsoap")
	script := fmt.Sprintf(`settings.init.allow_root.set(true)
settings.log.stdout.set(true)
settings.log.file.set(false)
settings.log.level.set(3)
s = input.http(%q)
s = normalize(target=%.1f, lufs=true, gain_min=-20., gain_max=20., s)
s = limit(threshold=%.1f, s)
output.icecast(%%mp3(bitrate=%d), host="127.0.0.1", port=%d, password=%q, mount=%q, mksafe(s))
`, srv.HTTP(in), target, maxpeak, kbps, srv.Port, icecast.Password, out)
	path := filepath.Join(t.TempDir(), "peer.liq")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(liq, path)
	logf, _ := os.Create(filepath.Join(t.TempDir(), "liquidsoap.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("liquidsoap's log:\n%s", b)
		}
	})
}

// TestLiveThroughIcecast is the end-to-end test of `audiopost live`:
// ffmpeg pushes a programme (espeak-ng speakers whose level jumps by +12
// and -12 dB between turns, over pink noise 40 dB down) into an Icecast
// mount, `audiopost live` reads it and writes another mount, and the test
// reads that mount back and measures it with our meter: 5 s after each
// jump the short-term loudness is within 2 LU of the target, the true
// peak of the decoded MP3 stays under maxpeak, and pauses are not raised.
// The programme lasts 30 s of real time in the plain run (about 45 s in
// all; with 20 s the few pauses all fall in the leveler's first seconds
// and the ratio measures its start); with AUDIOPOST_LIVE_SECONDS set it
// lasts that long, and
// Liquidsoap runs beside it on the same input (normalize() and its
// limiter; 20 s to start): ours must show the smaller spread of
// short-term loudness and no true-peak overs.
func TestLiveThroughIcecast(t *testing.T) {
	if testing.Short() {
		t.Skip("real servers in real time")
	}
	// Beside the package's other tests that wait on real time or on
	// their own programs (go test runs -parallel of them at once): this
	// one's 45 s are mostly waiting on the programme's pace.
	t.Parallel()
	seconds, withPeer := 30, false
	if s, err := strconv.Atoi(os.Getenv("AUDIOPOST_LIVE_SECONDS")); err == nil && s > 0 {
		seconds, withPeer = s, true
	}
	const rate, target, maxpeak, kbps, preroll = 48000, -16.0, -1.0, 256, 6
	prog, spans, turns := testaudio.Conversation(t, rate, float64(seconds), 3, 0.4, []float64{0, 12, 0, -12}, -40)
	// Silence first, while the mounts, the stream, Liquidsoap and the
	// recorders connect.
	lead := make([]float64, preroll*rate)
	prog = append(lead, prog...)
	for i := range spans {
		spans[i].Start += int64(len(lead))
		spans[i].End += int64(len(lead))
	}
	for i := range turns {
		turns[i].Start += len(lead)
	}
	file := filepath.Join(t.TempDir(), "programme.wav")
	testaudio.WriteWAVBits(t, file, [][]float64{prog, prog}, rate, 24)

	srv := icecast.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(seconds+90)*time.Second)
	defer cancel()
	rctx, rstop := context.WithCancel(ctx)
	var peer *recorder
	if withPeer {
		// Liquidsoap takes seconds to start: it waits for its input and
		// sends silence meanwhile.
		liquidsoapPeer(t, srv, "/in.mp3", "/liq.mp3", target, maxpeak, kbps)
		srv.WaitMount(ctx, "/liq.mp3")
		peer = record(rctx, srv.HTTP("/liq.mp3"))
	}
	// The input as the stream gets it, MP3 and all: the reference of the
	// speech-to-pause ratio.
	input := record(rctx, srv.HTTP("/in.mp3"))
	pushed := time.Now()
	p := srv.Push(t, "/in.mp3", file, 320, false)
	srv.WaitMount(ctx, "/in.mp3")

	lctx, stop := context.WithCancel(ctx)
	liveErr := make(chan error, 1)
	go func() {
		liveErr <- run(lctx, []string{"live", "-i", srv.HTTP("/in.mp3"), "-bitrate", strconv.Itoa(kbps), "-o", srv.Source("/out.mp3"),
			"-algorithms", fmt.Sprintf(`{"loudnesstarget": %g, "maxpeak": %g}`, target, maxpeak), "-status", "0"}, os.Stdout, os.Stderr)
	}()
	srv.WaitMount(ctx, "/out.mp3")
	ours := record(rctx, srv.HTTP("/out.mp3"))
	select {
	case <-p.Done():
	case <-ctx.Done():
		t.Fatal("the programme did not end in time")
	}
	// The tail still on its way through the stream, Liquidsoap's buffers
	// and the server.
	time.Sleep(5 * time.Second)
	rstop()
	<-ours.done
	if peer != nil {
		<-peer.done
	}
	<-input.done
	if len(input.x) < (seconds-5)*rate {
		t.Fatalf("input: recorded only %.1f s", float64(len(input.x))/rate)
	}
	in, inOff := align(prog, input.x)
	// How late each listener hears the programme, its own buffering
	// included; the input mount's listener is the reference, so the
	// difference is what the stream between the mounts adds.
	lateness := func(r *recorder, off int) float64 { return r.first.Sub(pushed).Seconds() - float64(off)/rate }
	inLate := lateness(input, inOff)
	stop()
	if err := <-liveErr; err != nil {
		t.Fatalf("audiopost live: %v", err)
	}

	measure := func(name string, r *recorder) conversation.Figures {
		if len(r.x) < (seconds-5)*rate {
			t.Fatalf("%s: recorded only %.1f s", name, float64(len(r.x))/rate)
		}
		out, off := align(prog, r.x)
		// Measure where the recording covers the programme: from the
		// first turn on (the pre-roll is silence).
		if off > len(lead) {
			t.Fatalf("%s: the recording starts %.1f s into the programme, after its pre-roll", name, float64(off)/rate)
		}
		end := min(len(prog), off+len(r.x))
		f := conversation.Measure(t, in[len(lead):end], out[len(lead):end], rate, shift(spans, int64(len(lead)), int64(end)), shiftTurns(turns, len(lead), end), target, true)
		delay := lateness(r, off) - inLate
		t.Logf("%s: short-term 5 s after a jump at most %.2f LU off, integrated %.2f LUFS, true peak %.2f dBTP, speech-to-pause ratio %+.2f dB, short-term spread %.2f LU; %.2f s later than the input mount's listener",
			name, f.WorstJump, f.Integrated, f.TruePeak, f.RatioChange, f.ShortTermSpread, delay)
		return f
	}
	f := measure("audiopost", ours)
	if f.WorstJump > 2 {
		t.Errorf("short-term loudness %.2f LU off the target 5 s after a jump, want at most 2", f.WorstJump)
	}
	if f.TruePeak > maxpeak {
		t.Errorf("true peak of the decoded output %.2f dBTP, above %v", f.TruePeak, maxpeak)
	}
	if math.Abs(f.RatioChange) > 1 {
		t.Errorf("speech-to-pause ratio changed by %.2f dB, want within 1", f.RatioChange)
	}
	if !withPeer {
		return
	}
	l := measure("liquidsoap", peer)
	if f.ShortTermSpread >= l.ShortTermSpread {
		t.Errorf("short-term spread %.2f LU, Liquidsoap's %.2f: want ours smaller", f.ShortTermSpread, l.ShortTermSpread)
	}
	if l.TruePeak > maxpeak {
		t.Logf("Liquidsoap's decoded output peaks at %.2f dBTP, over %v", l.TruePeak, maxpeak)
	}
}

// shift moves spans by -by frames and keeps those inside [0, end-by).
func shift(spans []audio.Span, by, end int64) []audio.Span {
	var out []audio.Span
	for _, s := range spans {
		if s.End <= end {
			out = append(out, audio.Span{Start: s.Start - by, End: s.End - by})
		}
	}
	return out
}

func shiftTurns(turns []testaudio.Turn, by, end int) []testaudio.Turn {
	var out []testaudio.Turn
	for _, tr := range turns {
		if tr.Start < end {
			out = append(out, testaudio.Turn{Start: tr.Start - by, GainDB: tr.GainDB})
		}
	}
	return out
}
