package live_test

import (
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/live"
)

// Example levels a quiet stream toward -16 LUFS in one pass, as it is
// read: 30 s of syllables at about -40 LUFS come out at the target, under
// the true-peak ceiling, with less than 100 ms of look-ahead.
func Example() {
	const rate = 48000
	in := audio.NewBuffer(2, 30*rate)
	for i := range in[0] {
		t := float64(i) / rate
		env := math.Max(0, math.Sin(2*math.Pi*3*t)) // three syllables a second
		v := 0.02 * env * (math.Sin(2*math.Pi*150*t) + 0.5*math.Sin(2*math.Pi*450*t))
		in[0][i], in[1][i] = v, v
	}
	c := live.DefaultConfig()
	c.MaxTruePeak = -1
	p, err := live.New(audio.NewBufferSource(in, rate), c)
	if err != nil {
		panic(err)
	}
	buf := audio.NewBuffer(2, rate/100) // 10 ms at a time, as a live input comes
	for {
		if _, err := p.Read(buf); err == io.EOF {
			break
		} else if err != nil {
			panic(err)
		}
	}
	st := p.Stats()
	fmt.Printf("look-ahead %.1f ms\n", 1000*float64(p.Latency())/rate)
	fmt.Printf("short-term at the end %.0f LUFS, true peak under -1 dBTP: %v\n", st.ShortTerm, p.Result().TruePeak <= -1)
	// Output:
	// look-ahead 23.2 ms
	// short-term at the end -16 LUFS, true peak under -1 dBTP: true
}
