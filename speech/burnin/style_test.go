package burnin_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/speech/burnin"
)

// TestFontsHaveNeeds: every family the font table maps onto has a row in
// the tests' need.Table with the same Debian package, so that a test
// that needs it skips naming the package and CI installs it.
func TestFontsHaveNeeds(t *testing.T) {
	for name, f := range burnin.Fonts {
		n, ok := need.Lookup(need.KindFont, f.Family)
		if !ok || n.Package != f.Package {
			t.Errorf("font %s: %s from %s: need.Table has %+v", name, f.Family, f.Package, n)
		}
	}
	if _, ok := need.Lookup(need.KindFont, burnin.FallbackFamily); !ok {
		t.Errorf("the fallback %s has no row in need.Table", burnin.FallbackFamily)
	}
}

// TestStyleMatchesProduction keeps Style convertible from
// production.Subtitles and the allowed values the same as production's.
func TestStyleMatchesProduction(t *testing.T) {
	if got := burnin.Style(production.DefaultSubtitles()); got != burnin.DefaultStyle() {
		t.Errorf("defaults differ: %+v vs %+v", got, burnin.DefaultStyle())
	}
	for _, c := range []struct {
		name       string
		ours, prod []string
	}{
		{"fonts", burnin.FontNames, production.SubtitleFonts},
		{"style modes", burnin.StyleModes, production.SubtitleStyleModes},
		{"h aligns", burnin.HAligns, production.SubtitleHAligns},
		{"v aligns", burnin.VAligns, production.SubtitleVAligns},
		{"word highlights", burnin.WordHighlights, production.SubtitleWordHighlights},
	} {
		if !slices.Equal(c.ours, c.prod) {
			t.Errorf("%s: %v, production has %v", c.name, c.ours, c.prod)
		}
	}
	for _, f := range burnin.FontNames {
		if _, ok := burnin.Fonts[f]; !ok {
			t.Errorf("font %s has no family", f)
		}
	}
	if len(burnin.Fonts) != len(burnin.FontNames) {
		t.Errorf("font table has %d rows for %d names", len(burnin.Fonts), len(burnin.FontNames))
	}
}

// TestValidate has a row for every styling rule: each allowed value of
// each key passes, values outside are rejected on that key alone, and the
// forbidden combinations are rejected on subtitle_word_highlight.
func TestValidate(t *testing.T) {
	type row struct {
		name   string
		change func(*burnin.Style)
		field  string // "" = valid
		msg    string // part of the message
	}
	var rows []row
	for _, f := range burnin.FontNames {
		rows = append(rows, row{"font " + f, func(s *burnin.Style) { s.Font = f }, "", ""})
	}
	for _, n := range []int{8, 9, 22, 100, 199, 200} {
		rows = append(rows, row{"size ok", func(s *burnin.Style) { s.FontSize = n }, "", ""})
	}
	for _, n := range []int{-1, 0, 7, 201, 1000} {
		rows = append(rows, row{"size bad", func(s *burnin.Style) { s.FontSize = n }, "subtitle_font_size", "from 8 to 200"})
	}
	for _, b := range []func(*burnin.Style){
		func(s *burnin.Style) { s.Bold = true }, func(s *burnin.Style) { s.Italic = true },
		func(s *burnin.Style) { s.Underline = true }, func(s *burnin.Style) { s.Uppercase = true },
		func(s *burnin.Style) { s.Enabled = false },
	} {
		rows = append(rows, row{"boolean", b, "", ""})
	}
	for _, c := range []string{"#000000", "#FFFFFF", "#dc2626", "#A1b2C3"} {
		rows = append(rows, row{"color " + c, func(s *burnin.Style) { s.Color = c }, "", ""},
			row{"highlight " + c, func(s *burnin.Style) { s.HighlightColor = c }, "", ""})
	}
	for _, c := range []string{"", "000000", "#fff", "#gggggg", "#0000000", "red", " #000000"} {
		rows = append(rows, row{"color " + c, func(s *burnin.Style) { s.Color = c }, "subtitle_color", "#rrggbb"},
			row{"highlight " + c, func(s *burnin.Style) { s.HighlightColor = c }, "subtitle_highlight_color", "#rrggbb"})
	}
	bad := []struct {
		field string
		set   func(*burnin.Style, string)
	}{
		{"subtitle_font", func(s *burnin.Style, v string) { s.Font = v }},
		{"subtitle_style_mode", func(s *burnin.Style, v string) { s.StyleMode = v }},
		{"subtitle_h_align", func(s *burnin.Style, v string) { s.HAlign = v }},
		{"subtitle_v_align", func(s *burnin.Style, v string) { s.VAlign = v }},
		{"subtitle_word_highlight", func(s *burnin.Style, v string) { s.WordHighlight = v }},
	}
	for _, b := range bad {
		for _, v := range []string{"", "nope", "Default", "CENTER"} {
			rows = append(rows, row{b.field + " " + v, func(s *burnin.Style) { b.set(s, v) }, b.field, "choose one of"})
		}
	}
	for _, h := range burnin.HAligns {
		for _, v := range burnin.VAligns {
			rows = append(rows, row{"align " + h + " " + v, func(s *burnin.Style) { s.HAlign, s.VAlign = h, v }, "", ""})
		}
	}
	// Every style mode with every word highlight.
	for _, m := range burnin.StyleModes {
		for _, h := range burnin.WordHighlights {
			r := row{m + "+" + h, func(s *burnin.Style) { s.StyleMode, s.WordHighlight = m, h }, "", ""}
			if (m == "color_bg" || m == "white_bg") && (h == "border" || h == "glow" || h == "reveal") {
				r.field, r.msg = "subtitle_word_highlight", "cannot be combined with subtitle_style_mode "+m
			}
			rows = append(rows, r)
		}
	}
	for _, r := range rows {
		s := burnin.DefaultStyle()
		r.change(&s)
		errs := s.Validate()
		if r.field == "" {
			if errs != nil {
				t.Errorf("%s: %v", r.name, errs)
			}
			continue
		}
		if len(errs) != 1 || !strings.Contains(errs[r.field], r.msg) {
			t.Errorf("%s: %v, want one error on %s containing %q", r.name, errs, r.field, r.msg)
		}
	}
	// Several problems are reported together, each on its field.
	s := burnin.Style{}
	errs := s.Validate()
	for _, f := range []string{"subtitle_font", "subtitle_font_size", "subtitle_color", "subtitle_highlight_color", "subtitle_style_mode", "subtitle_h_align", "subtitle_v_align", "subtitle_word_highlight"} {
		if errs[f] == "" {
			t.Errorf("zero style: no error on %s (%v)", f, errs)
		}
	}
	t.Logf("%d rows", len(rows))
}
