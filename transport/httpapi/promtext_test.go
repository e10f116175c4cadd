package httpapi_test

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A parser of the Prometheus text exposition format, version 0.0.4,
// strict about what the format requires: names and label names, label
// value escapes, values, at most one HELP and TYPE per family before its
// samples, samples of a family together, no duplicate series, and for
// histograms cumulative buckets ending in +Inf that equal _count.

type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

type promFamily struct {
	name, typ, help string
	samples         []promSample
}

var (
	promName  = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	promLabel = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// familyOf is the family a sample name belongs to, given the declared
// types.
func familyOf(name string, types map[string]string) string {
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suf); ok {
			if t := types[base]; t == "histogram" || (t == "summary" && suf != "_bucket") {
				return base
			}
		}
	}
	return name
}

func parsePromText(text string) (map[string]*promFamily, error) {
	fams := map[string]*promFamily{}
	types := map[string]string{}
	var order []string // families in the order their samples appear
	seen := map[string]bool{}
	get := func(name string) *promFamily {
		f := fams[name]
		if f == nil {
			f = &promFamily{name: name, typ: "untyped"}
			fams[name] = f
		}
		return f
	}
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("the exposition does not end in a newline")
	}
	for n, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		errf := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", n+1, line, fmt.Sprintf(format, args...))
		}
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE "):
			kind := line[2:6]
			name, rest, _ := strings.Cut(line[7:], " ")
			if !promName.MatchString(name) {
				return nil, errf("bad metric name")
			}
			f := get(name)
			if len(f.samples) > 0 {
				return nil, errf("%s after the family's samples", kind)
			}
			if kind == "HELP" {
				if f.help != "" {
					return nil, errf("second HELP")
				}
				for i := 0; i < len(rest); i++ {
					if rest[i] == '\\' {
						if i+1 == len(rest) || (rest[i+1] != '\\' && rest[i+1] != 'n') {
							return nil, errf("bad escape in HELP")
						}
						i++
					}
				}
				f.help = rest
				continue
			}
			if _, dup := types[name]; dup {
				return nil, errf("second TYPE")
			}
			if !slices.Contains([]string{"counter", "gauge", "histogram", "summary", "untyped"}, rest) {
				return nil, errf("unknown type %q", rest)
			}
			types[name], f.typ = rest, rest
			continue
		case strings.HasPrefix(line, "#"):
			continue
		}
		s, err := parsePromSample(line)
		if err != nil {
			return nil, errf("%v", err)
		}
		fam := familyOf(s.name, types)
		if len(order) == 0 || order[len(order)-1] != fam {
			if slices.Contains(order, fam) {
				return nil, errf("samples of %s are not together", fam)
			}
			order = append(order, fam)
		}
		key := s.name + fmt.Sprint(sortedLabels(s.labels))
		if seen[key] {
			return nil, errf("duplicate series")
		}
		seen[key] = true
		f := get(fam)
		f.samples = append(f.samples, s)
	}
	for _, f := range fams {
		if err := checkFamily(f); err != nil {
			return nil, err
		}
	}
	return fams, nil
}

func parsePromSample(line string) (promSample, error) {
	s := promSample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, fmt.Errorf("no value")
	}
	s.name = line[:i]
	if !promName.MatchString(s.name) {
		return s, fmt.Errorf("bad metric name %q", s.name)
	}
	rest := line[i:]
	if strings.HasPrefix(rest, "{") {
		rest = rest[1:]
		for !strings.HasPrefix(rest, "}") {
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return s, fmt.Errorf("bad label list")
			}
			name := rest[:eq]
			if !promLabel.MatchString(name) {
				return s, fmt.Errorf("bad label name %q", name)
			}
			if _, dup := s.labels[name]; dup {
				return s, fmt.Errorf("label %s twice", name)
			}
			rest = rest[eq+2:]
			var v strings.Builder
			for {
				if rest == "" {
					return s, fmt.Errorf("unterminated label value")
				}
				c := rest[0]
				rest = rest[1:]
				if c == '"' {
					break
				}
				if c == '\\' {
					if rest == "" {
						return s, fmt.Errorf("bad escape")
					}
					switch rest[0] {
					case '\\':
						v.WriteByte('\\')
					case '"':
						v.WriteByte('"')
					case 'n':
						v.WriteByte('\n')
					default:
						return s, fmt.Errorf("bad escape \\%c", rest[0])
					}
					rest = rest[1:]
					continue
				}
				if c == '\n' {
					return s, fmt.Errorf("raw newline in a label value")
				}
				v.WriteByte(c)
			}
			s.labels[name] = v.String()
			rest = strings.TrimPrefix(rest, ",")
		}
		rest = rest[1:]
	}
	fields := strings.Fields(rest)
	if len(fields) < 1 || len(fields) > 2 || !strings.HasPrefix(rest, " ") {
		return s, fmt.Errorf("want a value and an optional timestamp")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, fmt.Errorf("bad value %q", fields[0])
	}
	if len(fields) == 2 {
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			return s, fmt.Errorf("bad timestamp %q", fields[1])
		}
	}
	s.value = v
	return s, nil
}

func sortedLabels(l map[string]string) []string {
	var out []string
	for k, v := range l {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// checkFamily checks the rules of its type.
func checkFamily(f *promFamily) error {
	switch f.typ {
	case "counter":
		for _, s := range f.samples {
			if s.value < 0 || math.IsNaN(s.value) {
				return fmt.Errorf("counter %s is %v", s.name, s.value)
			}
		}
	case "histogram":
		type series struct {
			les      []float64
			counts   []float64
			sum, cnt *float64
		}
		all := map[string]*series{}
		for _, s := range f.samples {
			l := map[string]string{}
			for k, v := range s.labels {
				if k != "le" {
					l[k] = v
				}
			}
			key := fmt.Sprint(sortedLabels(l))
			se := all[key]
			if se == nil {
				se = &series{}
				all[key] = se
			}
			v := s.value
			switch s.name {
			case f.name + "_bucket":
				le, err := strconv.ParseFloat(s.labels["le"], 64)
				if err != nil {
					return fmt.Errorf("%s: bad le %q", s.name, s.labels["le"])
				}
				if n := len(se.les); n > 0 && (le <= se.les[n-1] || v < se.counts[n-1]) {
					return fmt.Errorf("%s%v: buckets not increasing and cumulative", s.name, l)
				}
				se.les, se.counts = append(se.les, le), append(se.counts, v)
			case f.name + "_sum":
				se.sum = &v
			case f.name + "_count":
				se.cnt = &v
			default:
				return fmt.Errorf("%s in histogram %s", s.name, f.name)
			}
		}
		for key, se := range all {
			n := len(se.les)
			if n == 0 || !math.IsInf(se.les[n-1], 1) || se.sum == nil || se.cnt == nil || se.counts[n-1] != *se.cnt {
				return fmt.Errorf("histogram %s%s lacks +Inf, _sum or _count, or +Inf differs from _count", f.name, key)
			}
		}
	case "summary":
		for _, s := range f.samples {
			if s.name == f.name {
				if _, ok := s.labels["quantile"]; !ok {
					return fmt.Errorf("summary sample %s without quantile", s.name)
				}
			}
		}
	}
	return nil
}

// value returns the value of the sample of family name with the given
// labels (name, value pairs; a subset), or NaN.
func (f *promFamily) value(name string, labels ...string) float64 {
	for _, s := range f.samples {
		if s.name != name {
			continue
		}
		match := true
		for i := 0; i+1 < len(labels); i += 2 {
			if s.labels[labels[i]] != labels[i+1] {
				match = false
			}
		}
		if match {
			return s.value
		}
	}
	return math.NaN()
}
