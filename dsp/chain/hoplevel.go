package chain

import (
	"math"
	"sync"
)

// hopLevel is a power (a 10 ms hop's K-weighted energy, or its squared
// sample peak) kept in 16 bits as a level in hundredths of a dB above
// hopLevelFloor; 0 is no power. The loudness pass keeps two for every hop
// until the normalization gain is fitted: three hours have a million
// hops, 8.6 MB as float32 and 4.3 MB as hopLevel, at the moment of the
// production's largest heap. Rounding to 0.01 dB changes an energy by at
// most 0.12 %, evenly up and down, which moves the limiter model's and
// predict's loudness by well under a thousandth of an LU.
type hopLevel uint16

const (
	hopLevelStep  = 0.01   // dB per code
	hopLevelFloor = -300.0 // dB of code 1; less is 0
)

// toHopLevel returns the level of power (>= 0).
func toHopLevel(power float64) hopLevel {
	if !(power > 0) {
		return 0
	}
	c := math.Round((10*math.Log10(power)-hopLevelFloor)/hopLevelStep) + 1
	return hopLevel(min(max(c, 0), math.MaxUint16))
}

// hopPowers decodes every hopLevel: a table of 256 KB, made once, for
// the limiter model's loops, which read each hop at every step of the fit.
var hopPowers = sync.OnceValue(func() *[math.MaxUint16 + 1]float32 {
	var t [math.MaxUint16 + 1]float32
	for c := 1; c < len(t); c++ {
		t[c] = float32(math.Pow(10, (hopLevelFloor+float64(c-1)*hopLevelStep)/10))
	}
	return &t
})
