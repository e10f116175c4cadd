package production

import (
	"fmt"
	"strings"
)

// A key the engine accepts but that does nothing with the rest of the
// settings is named in a warning (noEffectPrefix), never dropped silently.
// A combination the spec does not allow is an error instead
// (validateAlgorithms); these are the ones it allows that simply have no
// effect.

const noEffectPrefix = "settings without effect: "

// SettingsWithoutEffect lists the algorithm keys p sets that have no
// effect with its other settings, as "path (why)", in path order.
func (p *Production) SettingsWithoutEffect() []string {
	if p.IsMultitrack {
		var out []string
		for i, m := range p.MultiInputFiles {
			if m.Type == InputMultitrack {
				out = append(out, withoutEffect(m.Algorithms, ScopeTrack, fmt.Sprintf("multi_input_files.%d.algorithms", i))...)
			}
		}
		return out
	}
	return withoutEffect(p.Algorithms, ScopeSingletrack, "algorithms")
}

// denoiseFamily are the keys that refine the denoise switch.
var denoiseFamily = []string{"denoisemethod", "denoiseamount", "deverbamount", "debreathamount", "dehum", "dehumamount"}

// withoutEffect applies the rules of the denoise family to v in scope:
//   - with denoise off, every key of the family that asks for something
//     (set to a value that is neither its default nor -1, off) does
//     nothing, and so do segments. The spec makes denoise the family's
//     switch ("dehum: used with classic denoise"); hum alone is
//     denoise: true with denoiseamount: -1, which the engine applies;
//   - a hum frequency with hum removal off (dehumamount -1).
//
// Every other combination the validation lets through is applied.
func withoutEffect(v AlgorithmValues, scope Scope, path string) []string {
	if scope&(ScopeSingletrack|ScopeTrack) == 0 {
		return nil
	}
	a := v.In(scope)
	var out []string
	add := func(key, why string) { out = append(out, fmt.Sprintf("%s (%s)", joinPath(path, key), why)) }
	asks := func(key string) bool {
		x, ok := v[key]
		if !ok || x == nil {
			return false
		}
		if row, ok := LookupAlgorithm(key, scope); ok && sameValue(x, row.Default) {
			return false
		}
		i, isInt := x.(int)
		return !isInt || i != -1
	}
	if !a.Bool("denoise") {
		for _, k := range denoiseFamily {
			if asks(k) {
				add(k, "needs denoise: true")
			}
		}
		if scope == ScopeSingletrack && len(a.Segments("segments")) > 0 {
			add("segments", "needs denoise: true")
		}
		return out
	}
	if asks("dehum") && a.Int("dehumamount") == -1 {
		add("dehum", "hum removal is off: dehumamount -1")
	}
	return out
}

// noEffectWarning is the warning SettingsWithoutEffect call for, or "".
func (p *Production) noEffectWarning() string {
	s := p.SettingsWithoutEffect()
	if len(s) == 0 {
		return ""
	}
	return noEffectPrefix + strings.Join(s, ", ")
}
