package main

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

const rate = 48000

// microphone returns own plus other (20 dB down, 3 ms late, as bleed)
// plus noise at noiseDB dBFS.
func microphone(own, other []float64, noiseDB float64, seed uint64) []float64 {
	noise := testaudio.WhiteNoise(len(own), math.Pow(10, noiseDB/20), seed)
	out := make([]float64, len(own))
	for i := range out {
		out[i] = own[i] + noise[i]
		if j := i - 144; j >= 0 {
			out[i] += 0.1 * other[j]
		}
	}
	return out
}

func dialog(t *testing.T, b audio.Buffer, spans []audio.Span) float64 {
	t.Helper()
	r, err := loudness.MeasureBuffer(b, rate, loudness.Options{Mode: loudness.ModeI, Speech: spans})
	if err != nil {
		t.Fatal(err)
	}
	return r.Dialog
}

// The program's master meets what it states: host and guest, recorded
// 15 dB apart with each other's bleed on their microphones (the guest's
// file starting later, at its offset), come out within 1 dB of each
// other; the music bed, shorter than the talk, is looped to its end and
// ducked under the speech; the master is at -16 LUFS under -1 dBTP and
// exactly as long as the talk.
func TestMultitrack(t *testing.T) {
	dir := t.TempDir()
	hostClean, hostSpans := testaudio.Phrases(t, rate, testaudio.Sentences[:3], 3.5, testaudio.Voices[0])
	guestVoice, guestSpans := testaudio.Phrases(t, rate, testaudio.Sentences[3:6], 3.5, testaudio.Voices[2])
	// The guest answers in the host's pauses (guest offset 0: its track
	// starts with the host's) and is recorded 15 dB lower.
	shift := int(hostSpans[0].End) + rate/2
	n := max(len(hostClean), shift+len(guestVoice))
	hostClean = append(hostClean, make([]float64, n-len(hostClean))...)
	guestClean := make([]float64, n)
	copy(guestClean[shift:], guestVoice)
	for i := range guestSpans {
		guestSpans[i].Start += int64(shift)
		guestSpans[i].End += int64(shift)
	}
	testaudio.Scale(guestClean, math.Pow(10, -15.0/20))
	host := microphone(hostClean, guestClean, -65, 1)
	guest := microphone(guestClean, hostClean, -70, 2)
	bed := testaudio.Music(rate, 7, 3)
	// The guest's recorder started late: its file begins at the guest's
	// first answer, and the guest track's offset puts it back in place.
	guest = guest[shift-rate/4:]
	guestOffset := float64(shift-rate/4) / rate
	for name, x := range map[string][]float64{"host": host, "guest": guest, "bed": bed} {
		testaudio.WriteWAV(t, filepath.Join(dir, name+".wav"), [][]float64{x, x}, rate)
	}
	in0 := dialog(t, audio.Buffer{host}, hostSpans)
	in1 := dialog(t, audio.Buffer{append(make([]float64, shift-rate/4), guest...)}, guestSpans)

	out := filepath.Join(dir, "master.wav")
	var stdout bytes.Buffer
	o := options{out: out, guestOffset: guestOffset, duckDB: -18, fade: 500 * time.Millisecond, target: -16, ceiling: -1}
	paths := [3]string{filepath.Join(dir, "host.wav"), filepath.Join(dir, "guest.wav"), filepath.Join(dir, "bed.wav")}
	if err := run(context.Background(), paths, o, &stdout); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + strings.TrimSpace(stdout.String()))

	b, _ := testaudio.ReadFile(t, out)
	if b.Frames() != len(host) {
		t.Errorf("master has %d frames, the talk %d", b.Frames(), len(host))
	}
	r, err := loudness.MeasureBuffer(b, rate, loudness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Integrated+16) > 0.5 || r.TruePeak > -1 {
		t.Errorf("master %.2f LUFS, true peak %.2f dBTP; want -16 +- 0.5 and <= -1", r.Integrated, r.TruePeak)
	}
	out0, out1 := dialog(t, b, hostSpans), dialog(t, b, guestSpans)
	t.Logf("host - guest: %.2f dB in, %.2f dB in the master", in0-in1, out0-out1)
	if math.Abs(out0-out1) > 1 {
		t.Errorf("speakers %.2f dB apart in the master, want within 1 dB", out0-out1)
	}
	// The guest's offset is sample-accurate: the guest's first answer in
	// the master lines up with the guest's voice.
	mono := make([]float64, b.Frames())
	for i := range mono {
		mono[i] = (b[0][i] + b[1][i]) / 2
	}
	sp := guestSpans[0]
	if lag := testaudio.Lag(guestClean[sp.Start:sp.End], mono[sp.Start:sp.End], 480); lag != 0 {
		t.Errorf("the guest is %d frames late in the master", lag)
	}
	// The bed: at the end of the master, after the last phrase, only the
	// looped bed plays, at full level; under the speech it is 18 dB
	// lower. Its level relative to the speech tells both.
	pauses := testaudio.Complement(append(append([]audio.Span(nil), hostSpans...), guestSpans...), b.Frames(), rate)
	last := pauses[len(pauses)-1]
	bedLevel := testaudio.SpanDB(mono, []audio.Span{last})
	t.Logf("bed alone at the end: %.1f dBFS", bedLevel)
	if math.IsInf(bedLevel, -1) || bedLevel < -60 {
		t.Errorf("no bed at the end of the master (%.1f dBFS): not looped", bedLevel)
	}
}
