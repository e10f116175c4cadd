package spectral

// phasorTabs holds Dehum's tables of phasors (each harmonic's, or each
// point's between them, one decimated sample apart) a second time,
// sample-major, so that dots demodulates a block by every table at once:
// for sample n, the real parts of the tables, then their imaginary parts,
// each padded with zeros to kp, a multiple of four.
type phasorTabs struct {
	re, im [][]float64 // by table, as dotTab reads them
	kp     int
	t      []float64
}

func newPhasorTabs(re, im [][]float64) phasorTabs {
	p := phasorTabs{re: re, im: im, kp: (len(re) + 3) &^ 3}
	n := len(re[0])
	p.t = make([]float64, 2*p.kp*n)
	for j := range re {
		for i := range n {
			p.t[i*2*p.kp+j] = re[j][i]
			p.t[i*2*p.kp+p.kp+j] = im[j][i]
		}
	}
	return p
}

// dots sets outR[j] + i outI[j] to dotTab(x, re[j], im[j]) for every table
// j, bit for bit: the AVX2 kernel runs four tables at a time, each lane
// summing as dotTab does. outR and outI hold kp values.
func (p *phasorTabs) dots(x, outR, outI []float64) {
	if useAVX2 && len(x) > 0 {
		_, _, _ = p.t[len(x)*2*p.kp-1], outR[p.kp-1], outI[p.kp-1]
		dotTabsAVX2(&x[0], len(x), &p.t[0], p.kp, &outR[0], &outI[0])
		return
	}
	for j := range p.re {
		d := dotTab(x, p.re[j], p.im[j])
		outR[j], outI[j] = real(d), imag(d)
	}
}

// goertzel runs one Goertzel step, s = y + 2cos(w) s1 - s2, of every
// oscillator (coef holding 2cos(w)) per sample of ys: sixteen oscillators
// at a time in the AVX2 kernel, each lane as the Go loop.
func goertzel(coef, s1, s2, ys []float64) {
	if len(ys) == 0 {
		return
	}
	m := 0
	if useAVX2 {
		m = len(coef) &^ 15
		if m > 0 {
			_, _ = s1[m-1], s2[m-1]
			goertzelAVX2(&coef[0], &s1[0], &s2[0], m, &ys[0], len(ys))
		}
	}
	coef, s1, s2 = coef[m:], s1[m:], s2[m:len(s1)]
	for _, y := range ys {
		for i, c := range coef[:len(s1)] {
			s0 := y + c*s1[i] - s2[i]
			s2[i] = s1[i]
			s1[i] = s0
		}
	}
}
