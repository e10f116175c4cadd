// Package burnin burns subtitles into video: it validates the styling keys
// of a video output (subtitle_font, subtitle_font_size, ...), lays the
// recognised words out as an ASS subtitle script in that style, with the
// word highlighting the style asks for (karaoke fill, per-word colour,
// bold, border or glow, or words revealed as they are spoken), and renders
// it onto the video with ffmpeg's libass filter.
//
// # Style
//
// Style has the fields of production.Subtitles in the same order and of
// the same types, so one converts into the other: burnin.Style(*o.Subtitles).
// Font sizes are pixels of a 480-line frame and scale with the video (22
// is 4.6 % of the height: 50 px on 1080p). The style modes:
//
//	plain          text in subtitle_color, nothing around it
//	color_outline  text in white (black when subtitle_color is light), outlined in subtitle_color
//	white_outline  text in subtitle_color, outlined in white
//	color_bg       text in white (black when subtitle_color is light) on a box of subtitle_color
//	white_bg       text in subtitle_color on a white box
//
// The default, color_bg with #000000, is white text on a black box. The
// word highlight modes mark the word being spoken with
// subtitle_highlight_color: karaoke fills the words in that colour as
// they are spoken; highlight colours the current word, highlight_bold also
// makes it bold; border outlines it, glow gives it a blurred halo; reveal
// shows the words one by one as they are spoken. border, glow and reveal
// draw with the outline, which the box modes use as the box, so they are
// not allowed with color_bg and white_bg.
//
// # Fonts
//
// The spec's font names map onto families from Debian's font packages
// (see Fonts): the ones Debian has by name (Bebas Neue, Inter, Quicksand,
// Lobster Two) are used as they are; the others take the nearest Debian
// family of the same kind (condensed, geometric, slab, script, display).
// A family that is not installed falls back to DejaVu Sans, which
// ResolveFont and Burn report.
package burnin

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/audio/procpool"
)

// Style is the burn-in style of a video output: the keys of the spec's
// styling table. Its fields match production.Subtitles.
type Style struct {
	Enabled        bool
	Font           string
	FontSize       int
	Bold           bool
	Italic         bool
	Underline      bool
	Uppercase      bool
	Color          string
	HighlightColor string
	StyleMode      string
	HAlign         string
	VAlign         string
	WordHighlight  string
}

// Allowed values of the styling keys, as the spec lists them.
var (
	FontNames      = []string{"default", "mono", "serif", "bebas", "anton", "bangers", "montserrat", "poppins", "inter", "oswald", "archivo", "lobster", "sigmar", "titan", "caveat", "fjalla", "bungee", "space", "playfair", "alfa", "monoton", "quicksand"}
	StyleModes     = []string{"plain", "color_outline", "white_outline", "color_bg", "white_bg"}
	HAligns        = []string{"left", "center", "right"}
	VAligns        = []string{"top", "middle", "bottom"}
	WordHighlights = []string{"none", "karaoke", "reveal", "highlight", "highlight_bold", "border", "glow"}
)

// Font size limits.
const (
	MinFontSize = 8
	MaxFontSize = 200
)

// DefaultStyle returns the spec's defaults, with burn-in enabled.
func DefaultStyle() Style {
	return Style{Enabled: true, Font: "default", FontSize: 22, Color: "#000000", HighlightColor: "#dc2626",
		StyleMode: "color_bg", HAlign: "center", VAlign: "bottom", WordHighlight: "highlight"}
}

var colorRE = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// Validate checks every styling value and the combinations the spec
// forbids, and returns the problems keyed by the API's field names
// ("subtitle_font", "subtitle_font_size", "subtitle_color",
// "subtitle_highlight_color", "subtitle_style_mode", "subtitle_h_align",
// "subtitle_v_align", "subtitle_word_highlight"), or nil when the style
// is valid. production.FieldErrors.Merge takes the result under an
// output's path. Booleans cannot be wrong; whether the production has
// speech recognition is the caller's rule.
func (s Style) Validate() map[string]string {
	errs := map[string]string{}
	oneOf := func(key, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			errs[key] = fmt.Sprintf("%q is not allowed; choose one of %s", v, strings.Join(allowed, ", "))
		}
	}
	oneOf("subtitle_font", s.Font, FontNames)
	if s.FontSize < MinFontSize || s.FontSize > MaxFontSize {
		errs["subtitle_font_size"] = fmt.Sprintf("must be a whole number from %d to %d, not %d", MinFontSize, MaxFontSize, s.FontSize)
	}
	if !colorRE.MatchString(s.Color) {
		errs["subtitle_color"] = fmt.Sprintf("%q is not a color #rrggbb", s.Color)
	}
	if !colorRE.MatchString(s.HighlightColor) {
		errs["subtitle_highlight_color"] = fmt.Sprintf("%q is not a color #rrggbb", s.HighlightColor)
	}
	oneOf("subtitle_style_mode", s.StyleMode, StyleModes)
	oneOf("subtitle_h_align", s.HAlign, HAligns)
	oneOf("subtitle_v_align", s.VAlign, VAligns)
	oneOf("subtitle_word_highlight", s.WordHighlight, WordHighlights)
	if _, bad := errs["subtitle_word_highlight"]; !bad {
		switch s.WordHighlight {
		case "border", "glow", "reveal":
			if s.StyleMode == "color_bg" || s.StyleMode == "white_bg" {
				errs["subtitle_word_highlight"] = fmt.Sprintf("%s cannot be combined with subtitle_style_mode %s; choose plain, color_outline or white_outline, or another word highlight", s.WordHighlight, s.StyleMode)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// Font is a spec font name resolved to an installed family.
type Font struct {
	// Name is the spec's name ("bebas").
	Name string
	// Family is the family libass is asked for.
	Family string
	// Bold is set for display faces whose original is heavy.
	Bold bool
	// Package is the Debian package that provides the family.
	Package string
	// Fallback is set when the mapped family is not installed and Family
	// is the fallback (DejaVu Sans) instead.
	Fallback bool
}

// FontFace is a row of the font table.
type FontFace struct {
	Family  string
	Bold    bool
	Package string
}

// FallbackFamily is used when a mapped family is not installed.
const FallbackFamily = "DejaVu Sans"

// Fonts maps the spec's font names onto Debian font families. Names with
// a Debian family of their own use it; the rest use the nearest kind.
var Fonts = map[string]FontFace{
	"default":    {"DejaVu Sans", false, "fonts-dejavu-core"},
	"mono":       {"DejaVu Sans Mono", false, "fonts-dejavu-core"},
	"serif":      {"DejaVu Serif", false, "fonts-dejavu-core"},
	"bebas":      {"Bebas Neue", false, "fonts-bebas-neue"},
	"anton":      {"Liberation Sans Narrow", true, "fonts-liberation"},  // heavy condensed sans
	"bangers":    {"Comic Neue", true, "fonts-comic-neue"},              // comic display
	"montserrat": {"League Spartan", false, "fonts-league-spartan"},     // geometric sans
	"poppins":    {"Comfortaa", false, "fonts-comfortaa"},               // round geometric sans
	"inter":      {"Inter", false, "fonts-inter"},                       // the same family
	"oswald":     {"Liberation Sans Narrow", false, "fonts-liberation"}, // condensed gothic
	"archivo":    {"Liberation Sans", false, "fonts-liberation"},        // grotesque sans
	"lobster":    {"Lobster Two", false, "fonts-lobster"},               // Lobster's own sibling
	"sigmar":     {"Comfortaa", true, "fonts-comfortaa"},                // heavy rounded display
	"titan":      {"League Spartan", true, "fonts-league-spartan"},      // heavy display sans
	"caveat":     {"Dancing Script", false, "fonts-dancingscript"},      // handwriting
	"fjalla":     {"DejaVu Sans Condensed", true, "fonts-dejavu-extra"}, // bold condensed sans
	"bungee":     {"Rampart One", false, "fonts-rampart"},               // blocky signage display
	"space":      {"Liberation Mono", false, "fonts-liberation"},        // quirky mono-derived sans
	"playfair":   {"Liberation Serif", true, "fonts-liberation"},        // high-contrast display serif
	"alfa":       {"Roboto Slab", true, "fonts-roboto-slab"},            // heavy slab serif
	"monoton":    {"Bebas Neue", false, "fonts-bebas-neue"},             // tall all-caps display
	"quicksand":  {"Quicksand", false, "fonts-quicksand"},               // the same family
}

// FontPackages returns the Debian packages that provide every mapped
// family, sorted.
func FontPackages() []string {
	var out []string
	for _, f := range Fonts {
		if !slices.Contains(out, f.Package) {
			out = append(out, f.Package)
		}
	}
	slices.Sort(out)
	return out
}

var (
	familiesOnce sync.Once
	families     map[string]bool // nil when fc-list is not there
)

// installedFamilies lists the font families fontconfig knows, once.
func installedFamilies() map[string]bool {
	familiesOnce.Do(func() {
		tool, err := exec.LookPath("fc-list")
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := procpool.Command(ctx, tool, ":", "family").Output()
		if err != nil {
			return
		}
		families = map[string]bool{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			for _, f := range strings.Split(sc.Text(), ",") {
				families[strings.ToLower(strings.TrimSpace(strings.ReplaceAll(f, `\-`, "-")))] = true
			}
		}
	})
	return families
}

// ResolveFont returns the family for a spec font name. When fontconfig's
// fc-list is available and the mapped family is not installed, it falls
// back to FallbackFamily and says so; without fc-list the mapped family
// is taken as it is (libass then substitutes what fontconfig finds). An
// unknown name resolves as "default".
func ResolveFont(name string) Font {
	face, ok := Fonts[name]
	if !ok {
		name, face = "default", Fonts["default"]
	}
	f := Font{Name: name, Family: face.Family, Bold: face.Bold, Package: face.Package}
	if fams := installedFamilies(); fams != nil && !fams[strings.ToLower(face.Family)] {
		f.Family, f.Fallback, f.Package = FallbackFamily, true, Fonts["default"].Package
	}
	return f
}
