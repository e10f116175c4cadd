package benchmarks

import (
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// bar is one bar of a chart: audiopost's bars are blue, the peers' grey.
type bar struct {
	label string
	value float64
	ours  bool
}

// barsSVG draws horizontal bars with a dashed line at the acceptance
// threshold.
func barsSVG(title string, bars []bar, threshold float64) string {
	const w, left, right, rowH, top = 720, 210, 60, 26, 40
	h := top + rowH*len(bars) + 30
	lo, hi := min(0.0, threshold), max(0.0, threshold)
	for _, b := range bars {
		if !math.IsNaN(b.value) && !math.IsInf(b.value, 0) {
			lo, hi = min(lo, b.value), max(hi, b.value)
		}
	}
	span := hi - lo
	if span == 0 {
		span = 1
	}
	lo -= 0.05 * span
	hi += 0.05 * span
	x := func(v float64) float64 { return left + (v-lo)/(hi-lo)*(w-left-right) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="13">`+"\n", w, h)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/><text x="10" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	for i, b := range bars {
		y := top + i*rowH
		v := b.value
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		x0, x1 := x(0), x(v)
		if x1 < x0 {
			x0, x1 = x1, x0
		}
		color := "#9e9e9e"
		if b.ours {
			color = "#1e6fd9"
		}
		fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end">%s</text>`, left-8, y+17, html.EscapeString(b.label))
		fmt.Fprintf(&s, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`, x0, y+4, max(x1-x0, 0.5), rowH-8, color)
		fmt.Fprintf(&s, `<text x="%.1f" y="%d">%.1f</text>`+"\n", max(x(v), x(0))+4, y+17, b.value)
	}
	fmt.Fprintf(&s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`, x(0), top, x(0), top+rowH*len(bars))
	fmt.Fprintf(&s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#d32f2f" stroke-dasharray="5,4"/>`, x(threshold), top-4, x(threshold), top+rowH*len(bars)+4)
	fmt.Fprintf(&s, `<text x="%.1f" y="%d" fill="#d32f2f" text-anchor="middle">acceptance %.0f</text>`+"\n", x(threshold), top+rowH*len(bars)+20, threshold)
	s.WriteString("</svg>\n")
	return s.String()
}

// timelineSVG draws a programme's truth and the classifier's labels per
// second, one row each, speech blue, music orange, with the music's kind.
func timelineSVG(p realaudio.Programme, got []string) string {
	n := len(p.Labels)
	const left, top, rowH = 110, 40, 34
	px := max(4.0, math.Floor(1100.0/float64(n)))
	w := left + int(px*float64(n)) + 20
	h := top + 2*rowH + 50
	color := map[string]string{"speech": "#1e6fd9", "music": "#f39c12"}
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/><text x="10" y="22" font-size="15" font-weight="bold">Speech/music classifier over %s (blue speech, orange music)</text>`+"\n", html.EscapeString(p.ID))
	for row, labels := range [][]string{p.Labels, got} {
		y := top + row*rowH
		name := []string{"truth", "classifier"}[row]
		fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="end">%s</text>`, left-8, y+20, name)
		for i, l := range labels {
			fmt.Fprintf(&s, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`, float64(left)+px*float64(i), y+4, px, rowH-8, color[l])
		}
		s.WriteString("\n")
	}
	for _, g := range p.Segments {
		x := float64(left) + px*float64(g.Start)/realaudio.Rate
		fmt.Fprintf(&s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black" stroke-width="0.5"/>`, x, top, x, top+2*rowH+4)
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" font-size="10">%s</text>`+"\n", x+2, top+2*rowH+16, html.EscapeString(g.What))
	}
	fmt.Fprintf(&s, `<text x="%d" y="%d" font-size="11">seconds 0 to %d</text>`, left, h-8, n)
	s.WriteString("</svg>\n")
	return s.String()
}
