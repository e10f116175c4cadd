package realaudio

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/internal/fft"
)

// SpeedOfSound in m/s, at 20 °C.
const SpeedOfSound = 343.0

// Room is a shoebox room of the image-source simulation: its size, the
// positions of the talker and the microphone, and one reflection
// coefficient (of pressure) for all six walls.
type Room struct {
	Size, Source, Mic [3]float64 // metres
	Beta              float64
	// RT60 is the reverberation time asked for, in seconds.
	RT60 float64
}

// eyringBeta is the wall reflection coefficient that gives the room a
// reverberation time of rt60 by Eyring's formula, T = 0.161 V / (-S ln(1-a))
// with a = 1 - beta^2.
func eyringBeta(size [3]float64, rt60 float64) float64 {
	v := size[0] * size[1] * size[2]
	s := 2 * (size[0]*size[1] + size[0]*size[2] + size[1]*size[2])
	a := 1 - math.Exp(-0.161*v/(s*rt60))
	return math.Sqrt(1 - a)
}

// irLead is how many samples the impulse response starts before its direct
// path, for the fractional-delay kernels' first taps.
const irLead = 8

// Impulse computes the room's impulse response at Rate by the image-source
// method (Allen and Berkley, 1979): every mirror image of the source in
// the walls, up to the distance sound travels in 1.2 RT60, adds an
// impulse attenuated by 1/distance and by beta per reflection, at its
// delay placed with a windowed-sinc fractional delay. The response is
// scaled so that the direct path is 1 and shifted so that it sits at
// irLead: the dry signal delayed by irLead is what a perfect dereverberator
// returns.
func (r Room) Impulse() []float64 {
	fs := float64(Rate)
	d0 := dist(r.Source, r.Mic)
	maxT := 1.2 * r.RT60
	n := int(maxT*fs) + 2*irLead
	h := make([]float64, n)
	reach := SpeedOfSound*maxT + d0
	var nmax [3]int
	for k := range 3 {
		nmax[k] = int(reach/(2*r.Size[k])) + 1
	}
	lnb := math.Log(r.Beta)
	const half = irLead
	var win [2*half + 1]float64
	for i := range win {
		win[i] = 0.5 + 0.5*math.Cos(math.Pi*float64(i-half)/float64(half+1))
	}
	for nx := -nmax[0]; nx <= nmax[0]; nx++ {
		for qx := 0; qx <= 1; qx++ {
			x := float64(1-2*qx)*r.Source[0] + 2*float64(nx)*r.Size[0] - r.Mic[0]
			rx := iabs(nx-qx) + iabs(nx)
			for ny := -nmax[1]; ny <= nmax[1]; ny++ {
				for qy := 0; qy <= 1; qy++ {
					y := float64(1-2*qy)*r.Source[1] + 2*float64(ny)*r.Size[1] - r.Mic[1]
					ry := iabs(ny-qy) + iabs(ny)
					xy := x*x + y*y
					if xy > reach*reach {
						continue
					}
					for nz := -nmax[2]; nz <= nmax[2]; nz++ {
						for qz := 0; qz <= 1; qz++ {
							z := float64(1-2*qz)*r.Source[2] + 2*float64(nz)*r.Size[2] - r.Mic[2]
							d := math.Sqrt(xy + z*z)
							if d > reach {
								continue
							}
							refl := rx + ry + iabs(nz-qz) + iabs(nz)
							a := math.Exp(float64(refl)*lnb) * d0 / d
							t := (d-d0)/SpeedOfSound*fs + irLead
							c := int(math.Floor(t))
							frac := t - float64(c)
							for j := -half; j <= half; j++ {
								i := c + j
								if i < 0 || i >= n {
									continue
								}
								u := float64(j) - frac
								s := 1.0
								if u != 0 {
									s = math.Sin(math.Pi*u) / (math.Pi * u)
								}
								h[i] += a * s * win[j+half]
							}
						}
					}
				}
			}
		}
	}
	return h
}

func iabs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

func dist(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}

// SchroederRT60 estimates the reverberation time of an impulse response by
// Schroeder's backward integration: the energy decay curve's straight-line
// fit between -5 and -25 dB (T20), extrapolated to 60 dB. It returns 0
// when the curve never falls 25 dB.
func SchroederRT60(h []float64, sampleRate int) float64 {
	edc := make([]float64, len(h))
	var s float64
	for i := len(h) - 1; i >= 0; i-- {
		s += h[i] * h[i]
		edc[i] = s
	}
	if s == 0 {
		return 0
	}
	var sx, sy, sxx, sxy, n float64
	for i, e := range edc {
		db := 10 * math.Log10(e/s)
		if db > -5 {
			continue
		}
		if db < -25 {
			break
		}
		t := float64(i) / float64(sampleRate)
		sx += t
		sy += db
		sxx += t * t
		sxy += t * db
		n++
	}
	if n < 2 {
		return 0
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	if slope >= 0 {
		return 0
	}
	return -60 / slope
}

// newRoom returns a room of the given size with the talker and the
// microphone dist metres apart, whose measured RT60 is within 2% of rt60:
// Eyring's coefficient first, then corrected by the ratio of asked to
// measured (the decay rate goes as -ln beta), which converges in two or
// three rounds.
func newRoom(size, src [3]float64, azimuth, distance, rt60 float64) (Room, []float64, error) {
	mic := [3]float64{src[0] + distance*math.Cos(azimuth), src[1] + distance*math.Sin(azimuth), src[2] - 0.2}
	for k := range 3 {
		if mic[k] < 0.3 || mic[k] > size[k]-0.3 {
			return Room{}, nil, fmt.Errorf("realaudio: microphone %v outside room %v", mic, size)
		}
	}
	r := Room{Size: size, Source: src, Mic: mic, RT60: rt60, Beta: eyringBeta(size, rt60)}
	for range 6 {
		h := r.Impulse()
		got := SchroederRT60(h, Rate)
		if got == 0 {
			return Room{}, nil, fmt.Errorf("realaudio: room %v decays less than 25 dB", size)
		}
		if math.Abs(got/rt60-1) < 0.02 {
			return r, h, nil
		}
		r.Beta = math.Exp(math.Log(r.Beta) * got / rt60)
	}
	return Room{}, nil, fmt.Errorf("realaudio: room %v: RT60 does not converge to %.2f s", size, rt60)
}

// convolve returns x convolved with h by FFT, as long as x.
func convolve(x, h []float64) []float64 {
	n := 1
	for n < len(x)+len(h)-1 {
		n *= 2
	}
	p := fft.NewReal(n)
	a := make([]float64, n)
	copy(a, x)
	b := make([]float64, n)
	copy(b, h)
	A := make([]complex128, n/2+1)
	B := make([]complex128, n/2+1)
	p.Coefficients(A, a)
	p.Coefficients(B, b)
	for i := range A {
		A[i] *= B[i] / complex(float64(n), 0)
	}
	p.Sequence(a, A)
	return a[:len(x)]
}
