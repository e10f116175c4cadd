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
