package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// The graph's output meets what it states: -16 LUFS, true peak under
// -1 dBTP, and the two speakers, recorded 12 dB apart, end up close.
func TestGraph(t *testing.T) {
	const rate = 48000
	dir := t.TempDir()
	host, hostSpans := testaudio.Phrases(t, rate, testaudio.Sentences[:4], 2.5, testaudio.Voices[0])
	guest, guestSpans := testaudio.Phrases(t, rate, testaudio.Sentences[4:8], 2.5, testaudio.Voices[1])
	// The guest talks in the host's pauses, 12 dB quieter.
	shift := hostSpans[0].End + rate/2
	guest = append(make([]float64, shift), testaudio.Scale(guest, 0.25)...)
	for i := range guestSpans {
		guestSpans[i].Start += shift
		guestSpans[i].End += shift
	}
	testaudio.WriteWAV(t, filepath.Join(dir, "host.wav"), [][]float64{host}, rate)
	testaudio.WriteWAV(t, filepath.Join(dir, "guest.wav"), [][]float64{guest}, rate)
	out := filepath.Join(dir, "mix.wav")
	var stdout bytes.Buffer
	run(context.Background(), filepath.Join(dir, "host.wav"), filepath.Join(dir, "guest.wav"), out, &stdout)
	t.Log(strings.TrimSpace(stdout.String()))

	b, _ := testaudio.ReadFile(t, out)
	r, err := loudness.MeasureBuffer(b, rate, loudness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Integrated < -16.5 || r.Integrated > -15.5 || r.TruePeak > -1 {
		t.Errorf("output %.2f LUFS, true peak %.2f dBTP; want -16 +- 0.5 and <= -1", r.Integrated, r.TruePeak)
	}
	mono := make([]float64, b.Frames())
	for i := range mono {
		mono[i] = b[0][i] + b[1][i]
	}
	diff := testaudio.SpanDB(mono, hostSpans) - testaudio.SpanDB(mono, guestSpans)
	t.Logf("host - guest: 12 dB in, %.1f dB out", diff)
	if diff < -3 || diff > 3 {
		t.Errorf("speakers %.1f dB apart after leveling, want within 3 dB", diff)
	}
}
