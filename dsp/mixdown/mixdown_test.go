package mixdown_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// Offsets are sample-accurate: a click on each track, placed so that the
// tracks' offsets bring them together, lands on one sample of the master,
// with every node of the graph in place (gate, crossgate, high-pass,
// balance, loop/trim, ducking) or none.
func TestMixdownOffsets(t *testing.T) {
	const at = 3*fs + 777 // production frame of the clicks
	offsets := []int64{0, 12345, fs + 1}
	var tracks []audio.Buffer
	for k, off := range offsets {
		x := testaudio.WhiteNoise(4*fs, 1e-4, uint64(k))
		x[at-off] = 0.5
		b := audio.Buffer{x}
		if k == 1 {
			b = append(b, append([]float64(nil), x...)) // a stereo track
		}
		tracks = append(tracks, b)
	}
	for _, all := range []bool{false, true} {
		st := mixdown.Settings{Leveler: all, Gate: all, Crossgate: all}
		for k, b := range tracks {
			ts := mixdown.TrackSettings{Open: opener(b), Offset: time.Duration(offsets[k]) * time.Second / fs, Role: mixdown.RoleForeground}
			if all {
				ts = mixdown.DefaultTrack(opener(b))
				ts.Offset = time.Duration(offsets[k]) * time.Second / fs
				ts.LoopTrim = k == 2
				ts.Role = []mixdown.Role{mixdown.RoleForeground, mixdown.RoleForeground, mixdown.RoleDucking}[k]
			}
			st.Tracks = append(st.Tracks, ts)
		}
		md := must(mixdown.New(context.Background(), st))
		for k := range offsets {
			if md.Offset(k) != offsets[k] {
				t.Errorf("track %d offset %d frames, want %d", k, md.Offset(k), offsets[k])
			}
		}
		out := testaudio.ReadAll(t, must(md.Open(context.Background())))
		if int64(out.Frames()) != md.Frames() {
			t.Errorf("processing %v: the mix has %d frames, Frames says %d", all, out.Frames(), md.Frames())
		}
		for c := range out {
			peak, second := 0, 0.0
			for i, v := range out[c] {
				if math.Abs(v) > math.Abs(out[c][peak]) {
					peak = i
				}
			}
			for i, v := range out[c] {
				if i != peak {
					second = math.Max(second, math.Abs(v))
				}
			}
			if peak != at || math.Abs(out[c][peak]) < 2*second {
				t.Errorf("processing %v channel %d: peak %.3f at frame %d, next %.3f; want the clicks together at %d", all, c, out[c][peak], peak, second, at)
			}
		}
	}
}
