package burnin

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/speech"
)

// playResY is the height of the ASS canvas: font sizes and margins are in
// its pixels and libass scales them to the video.
const playResY = 480

// Canvas measures (pixels of the 480-line canvas).
const (
	marginH     = 24
	marginV     = 24
	outlineSize = 2.5 // the outline of the outline modes
	boxPadding  = 6   // the box of the box modes
	highlightBd = 4   // the border of the border highlight
	glowBd      = 6   // the halo of the glow highlight
	glowBlur    = 5
)

// rgb is a parsed #rrggbb colour.
type rgb struct{ r, g, b uint8 }

func parseColor(s string) rgb {
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	if err != nil || len(s) != 7 {
		return rgb{}
	}
	return rgb{uint8(v >> 16), uint8(v >> 8), uint8(v)}
}

var (
	white = rgb{255, 255, 255}
	black = rgb{}
)

// ass returns the colour as an ASS override value &HBBGGRR&.
func (c rgb) ass() string { return fmt.Sprintf("&H%02X%02X%02X&", c.b, c.g, c.r) }

// style returns the colour as an ASS style field &HAABBGGRR (alpha 0 is
// opaque).
func (c rgb) style(alpha uint8) string {
	return fmt.Sprintf("&H%02X%02X%02X%02X", alpha, c.b, c.g, c.r)
}

// light reports whether c is light enough that text on it should be black
// (relative luminance above one half).
func (c rgb) light() bool {
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.r)+0.7152*lin(c.g)+0.0722*lin(c.b) > 0.18 // about L* 50
}

func contrast(c rgb) rgb {
	if c.light() {
		return black
	}
	return white
}

// look is what a style mode draws.
type look struct {
	text, outline rgb
	borderStyle   int // 1 outline, 3 opaque box
	outlineSize   float64
}

func lookOf(s Style) look {
	c := parseColor(s.Color)
	switch s.StyleMode {
	case "plain":
		return look{text: c, outline: c, borderStyle: 1, outlineSize: 0}
	case "color_outline":
		return look{text: contrast(c), outline: c, borderStyle: 1, outlineSize: outlineSize}
	case "white_outline":
		return look{text: c, outline: white, borderStyle: 1, outlineSize: outlineSize}
	case "white_bg":
		return look{text: c, outline: white, borderStyle: 3, outlineSize: boxPadding}
	default: // color_bg
		return look{text: contrast(c), outline: c, borderStyle: 3, outlineSize: boxPadding}
	}
}

// alignment returns the ASS numpad alignment.
func alignment(h, v string) int {
	a := 2
	switch h {
	case "left":
		a = 1
	case "right":
		a = 3
	}
	switch v {
	case "middle":
		a += 3
	case "top":
		a += 6
	}
	return a
}

// assTime formats d as H:MM:SS.cc.
func assTime(d time.Duration) string {
	cs := max(int64(math.Round(float64(d)/float64(10*time.Millisecond))), 0)
	return fmt.Sprintf("%d:%02d:%02d.%02d", cs/360000, cs/6000%60, cs/100%60, cs%100)
}

// escapeText makes recognised text safe inside an ASS event: braces would
// open override blocks and a backslash could form \N or \h.
var escapeText = strings.NewReplacer("{", "(", "}", ")", `\`, "/", "\n", " ", "\r", " ")

func boolFlag(b bool) int {
	if b {
		return -1
	}
	return 0
}

// WriteASS writes an ASS subtitle script of cues in style s for a video of
// width x height pixels (the canvas keeps its aspect ratio), and returns
// the font it asked for. Events per cue: one for "none" and "karaoke"
// (with \kf fill tags), one per word for the modes that follow the
// current word. s should be valid (see Validate); unknown values take the
// defaults.
func WriteASS(w io.Writer, cues []speech.Cue, s Style, width, height int) (Font, error) {
	font := ResolveFont(s.Font)
	lk := lookOf(s)
	hi := parseColor(s.HighlightColor)
	resX := playResY * 16 / 9
	if width > 0 && height > 0 {
		resX = int(math.Round(float64(playResY) * float64(width) / float64(height)))
	}
	size := s.FontSize
	if size <= 0 {
		size = DefaultStyle().FontSize
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "[Script Info]\nScriptType: v4.00+\nPlayResX: %d\nPlayResY: %d\nWrapStyle: 0\nScaledBorderAndShadow: yes\nYCbCr Matrix: None\n\n", resX, playResY)
	bw.WriteString("[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n")
	primary, secondary := lk.text, lk.text
	if s.WordHighlight == "karaoke" {
		// \kf fills from the secondary colour to the primary.
		primary = hi
	}
	fmt.Fprintf(bw, "Style: Default,%s,%d,%s,%s,%s,%s,%d,%d,%d,0,100,100,0,0,%d,%g,0,%d,%d,%d,%d,1\n\n",
		font.Family, size, primary.style(0), secondary.style(0), lk.outline.style(0), lk.outline.style(0),
		boolFlag(s.Bold || font.Bold), boolFlag(s.Italic), boolFlag(s.Underline),
		lk.borderStyle, lk.outlineSize, alignment(s.HAlign, s.VAlign), marginH, marginH, marginV)
	bw.WriteString("[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n")
	event := func(start, end time.Duration, text string) {
		if end <= start {
			return
		}
		fmt.Fprintf(bw, "Dialogue: 0,%s,%s,Default,,0,0,0,,%s\n", assTime(start), assTime(end), text)
	}
	for _, c := range cues {
		if len(c.Words) == 0 {
			continue // nothing to lay out (Cues never makes such a cue)
		}
		words := cueWords(c, s.Uppercase)
		switch s.WordHighlight {
		case "none", "":
			event(c.Start, c.End, render(words, func(int, string) string { return "" }))
		case "karaoke":
			var b strings.Builder
			if gap := c.Words[0].Start - c.Start; gap > 0 {
				fmt.Fprintf(&b, `{\k%d}`, centis(gap))
			}
			b.WriteString(render(words, func(i int, _ string) string {
				end := c.End
				if i+1 < len(c.Words) {
					end = c.Words[i+1].Start
				}
				return fmt.Sprintf(`{\kf%d}`, centis(end-c.Words[i].Start))
			}))
			event(c.Start, c.End, b.String())
		default:
			for i := range c.Words {
				start, end := c.Words[i].Start, c.End
				if i == 0 {
					start = c.Start
				}
				if i+1 < len(c.Words) {
					end = c.Words[i+1].Start
				}
				event(start, end, render(words, func(j int, _ string) string { return wordTag(s.WordHighlight, i, j, hi) }))
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return font, err
	}
	return font, nil
}

func centis(d time.Duration) int64 { return max(int64(math.Round(d.Seconds()*100)), 0) }

// wordTag returns the override tags of word j while word i is spoken ("" for
// no change).
func wordTag(mode string, i, j int, hi rgb) string {
	switch mode {
	case "reveal":
		if j == i+1 {
			return `{\alpha&HFF&}` // this word and the rest keep their place, invisible
		}
		return ""
	case "highlight":
		if j == i {
			return `{\1c` + hi.ass() + `}`
		}
	case "highlight_bold":
		if j == i {
			return `{\1c` + hi.ass() + `\b1}`
		}
	case "border":
		if j == i {
			return fmt.Sprintf(`{\3c%s\bord%d}`, hi.ass(), highlightBd)
		}
	case "glow":
		if j == i {
			return fmt.Sprintf(`{\3c%s\bord%d\blur%d}`, hi.ass(), glowBd, glowBlur)
		}
	}
	return ""
}

// cueWord is a word of a cue and whether a line break follows it.
type cueWord struct {
	text string
	brk  bool
}

// cueWords returns the cue's words, escaped and cased, with the cue's line
// breaks.
func cueWords(c speech.Cue, upper bool) []cueWord {
	var out []cueWord
	for _, w := range c.Words {
		t := escapeText.Replace(w.Text)
		if upper {
			t = strings.ToUpper(t)
		}
		out = append(out, cueWord{text: t})
	}
	// Mark the line ends: each line holds as many words as it has fields.
	at := 0
	for li, l := range c.Lines {
		at += len(strings.Fields(l))
		if li < len(c.Lines)-1 && at > 0 && at <= len(out) {
			out[at-1].brk = true
		}
	}
	return out
}

// render joins the words with spaces and line breaks, each word preceded
// by its tag and followed by a reset (\r) when it has one.
func render(words []cueWord, tag func(i int, text string) string) string {
	var b strings.Builder
	for i, w := range words {
		t := tag(i, w.text)
		b.WriteString(t)
		b.WriteString(w.text)
		if t != "" && !strings.HasPrefix(t, `{\kf`) && !strings.HasPrefix(t, `{\alpha`) {
			b.WriteString(`{\r}`)
		}
		switch {
		case i == len(words)-1:
		case w.brk:
			b.WriteString(`\N`)
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}
