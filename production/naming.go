package production

import (
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameLen bounds file names (bytes), below the 255 of common filesystems
// with room for a split-on-chapters number.
const maxNameLen = 200

// SanitizeName makes s safe as one file name component: path separators,
// control characters and characters that filesystems or shells reject are
// replaced by "_", ".." sequences are broken up, leading dots and
// surrounding spaces are dropped, and the result is cut to a safe length.
// It returns "" when nothing usable is left.
func SanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8.RuneError, unicode.IsControl(r), strings.ContainsRune(`/\:*?"<>|`, r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	out := b.String()
	for strings.Contains(out, "..") {
		out = strings.ReplaceAll(out, "..", "_.")
	}
	out = strings.TrimSpace(out)
	out = strings.TrimLeft(out, ".")
	if len(out) > maxNameLen {
		out = out[:maxNameLen]
		for !utf8.ValidString(out) {
			out = out[:len(out)-1]
		}
	}
	return strings.TrimSpace(out)
}

// nameProblem says what is unsafe about a client-chosen name component, or
// "" when it is safe as is.
func nameProblem(s string) string {
	switch {
	case strings.ContainsAny(s, `/\`):
		return "must not contain path separators"
	case strings.Contains(s, ".."):
		return `must not contain ".."`
	case strings.IndexFunc(s, unicode.IsControl) >= 0 || !utf8.ValidString(s):
		return "must not contain control characters"
	case len(s) > maxNameLen:
		return "is too long"
	}
	return ""
}

// InputBasename returns the base name of an input file name or URL without
// its directory, query and extension: "https://x.org/a/ep%201.mp3?x=1"
// gives "ep 1".
func InputBasename(input string) string {
	s := input
	if i := strings.IndexAny(s, "?#"); i >= 0 && strings.Contains(s[:i], "://") {
		s = s[:i]
	}
	s = strings.ReplaceAll(s, `\`, "/")
	s = path.Base(s)
	if u, err := url.PathUnescape(s); err == nil {
		s = u
	}
	if s == "." || s == "/" {
		return ""
	}
	if ext := path.Ext(s); ext != "" && ext != s {
		s = strings.TrimSuffix(s, ext)
	}
	return SanitizeName(s)
}

// DefaultBasename is used when neither output_basename nor an input file
// name gives one.
const DefaultBasename = "output"

// OutputFilename resolves the file name of an output: filename wins over
// everything; otherwise basename + suffix + "." + ending, where basename
// defaults to the input's basename and ending to the format's first
// ending. For formats without endings (video, input) the input's extension
// is used. The result is sanitized.
func OutputFilename(o OutputFile, basename, inputFile string) string {
	if o.Filename != "" {
		return SanitizeName(o.Filename)
	}
	if basename == "" {
		basename = InputBasename(inputFile)
	}
	if basename == "" {
		basename = DefaultBasename
	}
	ending := strings.TrimPrefix(strings.ToLower(o.Ending), ".")
	f, _ := LookupFormat(o.Format)
	if ending == "" {
		ending = f.DefaultEnding()
	}
	if ending == "" {
		ending = strings.TrimPrefix(strings.ToLower(path.Ext(stripQuery(inputFile))), ".")
	}
	name := basename + o.Suffix
	if ending != "" {
		name += "." + ending
	}
	return SanitizeName(name)
}

// OutputFilename returns the resolved file name of output file i.
func (p *Production) OutputFilename(i int) string {
	return OutputFilename(p.OutputFiles[i], p.OutputBasename, p.InputFile)
}

func stripQuery(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 && strings.Contains(s[:i], "://") {
		return s[:i]
	}
	return s
}

// FilenameEnding returns the format ending a file name ends with, or "" if
// none of the format's endings match (multi-part endings like chapters.txt
// included).
func FilenameEnding(name string, f OutputFormat) string {
	lower := strings.ToLower(name)
	for _, e := range f.Endings {
		if strings.HasSuffix(lower, "."+e) && len(lower) > len(e)+1 {
			return e
		}
	}
	return ""
}
