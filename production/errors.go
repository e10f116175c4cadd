package production

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by every validation and syntax error of this
// package, so callers can answer them with a client error (HTTP 400).
var ErrInvalid = errors.New("production: invalid request")

// FieldErrors maps a field path to a message saying what is wrong with the
// field. It is the shape of the API's form_errors object.
//
// A path is the dotted chain of JSON names from the top of the request, with
// list elements addressed by their zero-based index:
//
//	"algorithms.loudnesstarget"
//	"output_files.0.bitrate"
//	"multi_input_files.2.algorithms.gain"
//	"algorithms.segments.1.start"
//
// Indices of list fields that an update appends to (output_files, chapters,
// multi_input_files) address the merged list, so the first appended entry of
// a production that already has two output files is "output_files.2".
// Each path carries one message, the first problem found; rules that involve
// no particular field use the path "" (non_field).
type FieldErrors map[string]string

// Add records msg for path unless the path already has a message.
func (e FieldErrors) Add(path, msg string) {
	if _, ok := e[path]; !ok {
		e[path] = msg
	}
}

// Addf is Add with a format string.
func (e FieldErrors) Addf(path, format string, args ...any) {
	e.Add(path, fmt.Sprintf(format, args...))
}

// Merge copies the messages of other into e, prefixing each path with
// prefix (joined with a dot unless prefix is empty).
func (e FieldErrors) Merge(prefix string, other FieldErrors) {
	for p, m := range other {
		e.Add(joinPath(prefix, p), m)
	}
}

// Err returns e as an error, or nil when it holds no message.
func (e FieldErrors) Err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

// Error lists every message, sorted by path, so logs are deterministic.
func (e FieldErrors) Error() string {
	paths := make([]string, 0, len(e))
	for p := range e {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	b.WriteString("invalid fields: ")
	for i, p := range paths {
		if i > 0 {
			b.WriteString("; ")
		}
		name := p
		if name == "" {
			name = "(request)"
		}
		b.WriteString(name)
		b.WriteString(": ")
		b.WriteString(e[p])
	}
	return b.String()
}

// Is makes errors.Is(fieldErrors, ErrInvalid) true.
func (e FieldErrors) Is(target error) bool { return target == ErrInvalid }

func joinPath(prefix, p string) string {
	switch {
	case prefix == "":
		return p
	case p == "":
		return prefix
	}
	return prefix + "." + p
}

func indexPath(prefix string, i int) string { return prefix + "." + strconv.Itoa(i) }
