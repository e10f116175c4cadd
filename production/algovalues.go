package production

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// AlgorithmValues are the algorithm keys set on a production, preset or
// track, normalized to the Go types of their ValueKind (bool, int, float64,
// string, []Segment) under their canonical names. Unset keys take the
// defaults of the algorithm table; the typed views SingleTrack, Master and
// Track apply them. It marshals as the API's algorithms object.
type AlgorithmValues map[string]any

// RawAlgorithms is an algorithms object as a client sent it, before parsing.
type RawAlgorithms map[string]json.RawMessage

// Segment is one denoise segment: a time range of the main input with its
// own denoise settings. Empty strings and nil amounts mean "as the
// production's setting".
type Segment struct {
	Start          float64 `json:"start"`
	Stop           float64 `json:"stop"`
	DenoiseMethod  string  `json:"denoisemethod,omitempty"`
	DenoiseAmount  *int    `json:"denoiseamount,omitempty"`
	DeverbAmount   *int    `json:"deverbamount,omitempty"`
	DebreathAmount *int    `json:"debreathamount,omitempty"`
	FilterMethod   string  `json:"filtermethod,omitempty"`
}

type segmentInput struct {
	Start          *float64 `json:"start"`
	Stop           *float64 `json:"stop"`
	DenoiseMethod  string   `json:"denoisemethod"`
	DenoiseAmount  *int     `json:"denoiseamount"`
	DeverbAmount   *int     `json:"deverbamount"`
	DebreathAmount *int     `json:"debreathamount"`
	FilterMethod   string   `json:"filtermethod"`
}

// Segment denoise methods.
var segmentMethods = []string{"speech", "music", "classic", "off"}

// Clone returns a deep copy of v.
func (v AlgorithmValues) Clone() AlgorithmValues {
	if v == nil {
		return nil
	}
	c := maps.Clone(v)
	if s, ok := c["segments"].([]Segment); ok {
		c["segments"] = slices.Clone(s)
	}
	return c
}

// UnmarshalJSON parses stored or sent algorithms leniently like
// ParseAlgorithms; it fails with FieldErrors when a value has the wrong
// type or a key is unknown.
func (v *AlgorithmValues) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*v = nil
		return nil
	}
	var raw RawAlgorithms
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	errs := FieldErrors{}
	out := AlgorithmValues{}
	out.apply(raw, "", errs)
	if len(errs) > 0 {
		return errs
	}
	*v = out
	return nil
}

// ParseAlgorithms parses a client's algorithms object into normalized
// values. Problems are recorded in errs under path (for example
// "algorithms"). A key sent as null is recorded with a nil value, which
// Merge turns into "unset, back to the default".
//
// Lenient forms accepted for form-like clients: booleans as true/false,
// "true"/"false", "on"/"off", 1/0; integers and numbers also as numeric
// strings. The alias "filtering" is stored as "hipfilter". Unknown keys are
// errors: a misspelt processing setting must not be silently dropped.
func ParseAlgorithms(raw RawAlgorithms, path string, errs FieldErrors) AlgorithmValues {
	out := AlgorithmValues{}
	out.apply(raw, path, errs)
	return out
}

func (v AlgorithmValues) apply(raw RawAlgorithms, path string, errs FieldErrors) {
	keys := slices.Sorted(maps.Keys(raw))
	for _, key := range keys {
		val := raw[key]
		p := joinPath(path, key)
		a, ok := anyAlgorithm(key)
		if !ok {
			errs.Add(p, "unknown algorithm")
			continue
		}
		if bytes.Equal(bytes.TrimSpace(val), []byte("null")) {
			v[a.Key] = nil
			continue
		}
		parsed, msg := parseValue(a.Kind, val, p, errs)
		if msg != "" {
			errs.Add(p, msg)
			continue
		}
		if parsed != nil {
			v[a.Key] = parsed
		}
	}
}

func parseValue(kind ValueKind, raw json.RawMessage, path string, errs FieldErrors) (any, string) {
	var s string
	isString := json.Unmarshal(raw, &s) == nil
	s = strings.TrimSpace(s)
	switch kind {
	case KindBool:
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			return b, ""
		}
		var f float64
		if json.Unmarshal(raw, &f) == nil && (f == 0 || f == 1) {
			return f == 1, ""
		}
		if isString {
			switch strings.ToLower(s) {
			case "true", "on", "1":
				return true, ""
			case "false", "off", "0":
				return false, ""
			}
		}
		return nil, "must be a boolean"
	case KindInt:
		var f float64
		err := json.Unmarshal(raw, &f)
		if err != nil && isString {
			f, err = strconv.ParseFloat(s, 64)
		}
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1e9 {
			return nil, "must be an integer"
		}
		return int(f), ""
	case KindFloat:
		var f float64
		err := json.Unmarshal(raw, &f)
		if err != nil && isString {
			f, err = strconv.ParseFloat(s, 64)
		}
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, "must be a number"
		}
		return f, ""
	case KindString:
		if !isString {
			return nil, "must be a string"
		}
		return s, ""
	case KindSegments:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, "must be an array of segments"
		}
		segs := make([]Segment, 0, len(items))
		bad := false
		for i, it := range items {
			ip := indexPath(path, i)
			var si segmentInput
			if err := decodeStrict(it, &si, ip, errs); err != nil {
				bad = true
				continue
			}
			if si.Start == nil {
				errs.Add(ip+".start", "is required")
				bad = true
			}
			if si.Stop == nil {
				errs.Add(ip+".stop", "is required")
				bad = true
			}
			if bad {
				continue
			}
			segs = append(segs, Segment{
				Start: *si.Start, Stop: *si.Stop,
				DenoiseMethod: strings.TrimSpace(si.DenoiseMethod), DenoiseAmount: si.DenoiseAmount,
				DeverbAmount: si.DeverbAmount, DebreathAmount: si.DebreathAmount,
				FilterMethod: strings.TrimSpace(si.FilterMethod),
			})
		}
		if bad {
			return nil, ""
		}
		return segs, ""
	}
	return nil, "has an unsupported type"
}

// Merge returns v with the keys of update applied: set keys replace, keys
// with a nil value are removed (back to their default).
func (v AlgorithmValues) Merge(update AlgorithmValues) AlgorithmValues {
	out := v.Clone()
	if out == nil {
		out = AlgorithmValues{}
	}
	for k, x := range update {
		if x == nil {
			delete(out, k)
			continue
		}
		out[k] = x
	}
	return out
}

// validateAlgorithms checks every key of v against the row of scope:
// whether the key may appear there and whether its value is allowed, then
// the cross-field rules of the denoise family and the segments.
func validateAlgorithms(v AlgorithmValues, scope Scope, path string, errs FieldErrors) {
	for _, key := range slices.Sorted(maps.Keys(v)) {
		p := joinPath(path, key)
		a, ok := LookupAlgorithm(key, scope)
		if !ok {
			errs.Add(p, scopeMessage(key, scope))
			continue
		}
		if !a.Allowed(v[key]) {
			errs.Addf(p, "%s is not allowed; choose one of %s", formatValue(v[key]), a.optionList())
		}
	}
	if scope&(ScopeSingletrack|ScopeTrack) != 0 {
		method := v.In(scope).String("denoisemethod")
		// 0 (full, the default) is tolerated where there is no reverb
		// reduction: clients send the defaults back, and the method simply
		// has none.
		if x, ok := v["deverbamount"].(int); ok && x > 0 && !ReducesReverb(method) {
			errs.Add(joinPath(path, "deverbamount"), "needs denoisemethod "+orList(deverbMethods))
		}
		if x, ok := v["debreathamount"].(int); ok && x != -1 && !ReducesBreaths(method) {
			errs.Add(joinPath(path, "debreathamount"), "needs denoisemethod "+orList(debreathMethods))
		}
	}
	if segs, ok := v["segments"].([]Segment); ok && scope == ScopeSingletrack {
		validateSegments(segs, v.In(scope).String("denoisemethod"), joinPath(path, "segments"), errs)
	}
}

// The denoise methods that reduce reverb (deverbamount) and breaths
// (debreathamount): classic and static model noise only, and static no
// breaths. Validation and the engine's translation both follow them.
var (
	deverbMethods   = []string{"static", "dynamic", "speech_isolation"}
	debreathMethods = []string{"dynamic", "speech_isolation"}
)

// ReducesReverb reports whether the denoise method (denoisemethod) has a
// reverb reduction.
func ReducesReverb(method string) bool { return slices.Contains(deverbMethods, method) }

// ReducesBreaths reports whether the denoise method (denoisemethod) has a
// breath reduction.
func ReducesBreaths(method string) bool { return slices.Contains(debreathMethods, method) }

// orList joins "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

func scopeMessage(key string, scope Scope) string {
	s := keyScopes(key)
	switch {
	case s == 0:
		return "unknown algorithm"
	case scope == ScopeMaster && s&ScopeSingletrack != 0 && s&ScopeTrack != 0:
		return "is a singletrack algorithm and not allowed on a multitrack production; set it per track in multi_input_files"
	case scope == ScopeMaster && s&ScopeSingletrack != 0:
		return "is a singletrack algorithm and not allowed on a multitrack production"
	case scope == ScopeMaster:
		return "is a per-track algorithm; set it in the algorithms of a multi_input_files track"
	case scope == ScopeSingletrack:
		return "is a multitrack algorithm and not allowed on a single-track production"
	}
	return "is not allowed on a multitrack track"
}

const segmentEpsilon = 1e-6

// validateSegments checks the segments of a production whose
// denoisemethod is method. A segment's reverb and breath reduction follow
// the rules of the production's (a "speech" segment runs the production's
// method, static where that is classic; an unnamed one the production's
// method itself), so a combination that reduces nothing is an error here
// as it is there.
func validateSegments(segs []Segment, method, path string, errs FieldErrors) {
	den, _ := LookupAlgorithm("denoiseamount", ScopeSingletrack)
	dev, _ := LookupAlgorithm("deverbamount", ScopeSingletrack)
	deb, _ := LookupAlgorithm("debreathamount", ScopeSingletrack)
	fm, _ := LookupAlgorithm("filtermethod", ScopeSingletrack)
	if len(segs) > MaxSegments {
		errs.Addf(path, "has %d segments; at most %d are allowed", len(segs), MaxSegments)
	}
	for i, s := range segs {
		p := indexPath(path, i)
		if !(s.Start >= 0 && s.Start <= MaxSegmentSeconds) {
			errs.Addf(p+".start", "must be a number of seconds from 0 to %d", MaxSegmentSeconds)
		}
		switch {
		case !(s.Start < s.Stop):
			errs.Add(p+".stop", "must be greater than start")
		case !(s.Stop <= MaxSegmentSeconds):
			errs.Addf(p+".stop", "must be at most %d seconds", MaxSegmentSeconds)
		}
		if i > 0 && math.Abs(s.Start-segs[i-1].Stop) > segmentEpsilon {
			errs.Addf(p+".start", "must equal the stop of the previous segment (%s); segments must be contiguous", formatValue(segs[i-1].Stop))
		}
		if s.DenoiseMethod != "" && !slices.Contains(segmentMethods, s.DenoiseMethod) {
			errs.Addf(p+".denoisemethod", "%s is not allowed; choose one of %s", s.DenoiseMethod, strings.Join(segmentMethods, ", "))
		}
		if s.DenoiseAmount != nil && !den.Allowed(*s.DenoiseAmount) {
			errs.Addf(p+".denoiseamount", "%d is not allowed; choose one of %s", *s.DenoiseAmount, den.optionList())
		}
		if s.DeverbAmount != nil {
			switch {
			case !dev.Allowed(*s.DeverbAmount):
				errs.Addf(p+".deverbamount", "%d is not allowed; choose one of %s", *s.DeverbAmount, dev.optionList())
			case *s.DeverbAmount > 0 && s.DenoiseMethod != "speech" && (s.DenoiseMethod != "" || method == "classic"):
				errs.Add(p+".deverbamount", "needs segment denoisemethod speech, or none with denoisemethod static, dynamic or speech_isolation")
			}
		}
		if s.DebreathAmount != nil {
			switch {
			case !deb.Allowed(*s.DebreathAmount):
				errs.Addf(p+".debreathamount", "%d is not allowed; choose one of %s", *s.DebreathAmount, deb.optionList())
			case *s.DebreathAmount != -1 && s.DenoiseMethod != "speech":
				errs.Add(p+".debreathamount", "needs segment denoisemethod speech")
			case *s.DebreathAmount != -1 && method != "dynamic" && method != "speech_isolation":
				errs.Add(p+".debreathamount", "needs denoisemethod dynamic or speech_isolation: a speech segment runs the production's method")
			}
		}
		if s.FilterMethod != "" && !fm.Allowed(s.FilterMethod) {
			errs.Addf(p+".filtermethod", "%s is not allowed; choose one of %s", s.FilterMethod, fm.optionList())
		}
	}
}

// AlgorithmView reads the algorithm values of one scope with the table's
// defaults applied: what the engine maps onto DSP settings.
type AlgorithmView struct {
	v     AlgorithmValues
	scope Scope
}

// In returns the view of v in scope.
func (v AlgorithmValues) In(scope Scope) AlgorithmView { return AlgorithmView{v: v, scope: scope} }

// value returns the value of key: the set value, else the default of the
// scope's row (following DefaultFrom), nil for a key without default.
func (a AlgorithmView) value(key string) any {
	if x, ok := a.v[key]; ok && x != nil {
		return x
	}
	row, ok := LookupAlgorithm(key, a.scope)
	if !ok {
		panic(fmt.Sprintf("production: algorithm %q has no row for scope %v", key, a.scope.Names()))
	}
	if row.DefaultFrom != "" {
		return a.value(row.DefaultFrom)
	}
	return row.Default
}

// Set reports whether key was set explicitly.
func (a AlgorithmView) Set(key string) bool { x, ok := a.v[key]; return ok && x != nil }

// Bool returns a switch.
func (a AlgorithmView) Bool(key string) bool { b, _ := a.value(key).(bool); return b }

// Int returns an integer setting.
func (a AlgorithmView) Int(key string) int { i, _ := a.value(key).(int); return i }

// Float returns a number setting.
func (a AlgorithmView) Float(key string) float64 { f, _ := a.value(key).(float64); return f }

// String returns a choice.
func (a AlgorithmView) String(key string) string { s, _ := a.value(key).(string); return s }

// Segments returns a copy of the denoise segments.
func (a AlgorithmView) Segments(key string) []Segment {
	x, _ := a.v[key].([]Segment)
	return slices.Clone(x)
}

// ValidateAlgorithms checks v as the algorithms of scope, recording each
// problem in errs under path joined with the key: for algorithm objects
// that travel outside a production (a live stream's).
func ValidateAlgorithms(v AlgorithmValues, scope Scope, path string, errs FieldErrors) {
	validateAlgorithms(v, scope, path, errs)
}
