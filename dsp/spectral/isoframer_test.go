package spectral

// isoFramer frames a signal as the isolator reads it and gives each
// frame's windowed power spectrum: the one framing of the isolation
// networks' fitting programs, their ceilings and diagnostics.
type isoFramer struct {
	n, hop int
	win    []float64
	ft     rfft
	spec   []complex128
	frame  []float64
}

func newIsoFramer(n, hop int, win []float64) *isoFramer {
	return &isoFramer{n: n, hop: hop, win: win, ft: newRFFT(n), spec: make([]complex128, n/2+1), frame: make([]float64, n)}
}

// pow writes into p (n/2+1 bins) the power of frame f of x, which holds
// the samples [(f+1)hop-n, (f+1)hop), zeros outside, and returns p.
func (fr *isoFramer) pow(x []float64, f int, p []float64) []float64 {
	clear(fr.frame)
	start := (f+1)*fr.hop - fr.n
	for i := range fr.frame {
		if j := start + i; j >= 0 && j < len(x) {
			fr.frame[i] = x[j]
		}
	}
	clear(p)
	fr.ft.forwardPow(fr.spec, p, fr.frame, fr.win)
	return p
}
