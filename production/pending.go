package production

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A server never accepts a setting silently: what it stores but does not
// apply yet (rows of the algorithm table with Pending, and the features
// below) is named in a warning on every production that asks for it.

// Features this server does not provide yet, by the field that asks for
// them; empty when every one is provided.
var pendingFeatures = map[string]string{}

// PendingSettings lists what p asks for that this server stores but does
// not apply yet, as "path (what is missing)", sorted.
func (p *Production) PendingSettings() []string {
	var out []string
	scope := p.Scope()
	check := func(path string, v AlgorithmValues, scope Scope) {
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if a, ok := LookupAlgorithm(k, scope); ok && a.Pending != "" && v[k] != nil {
				out = append(out, fmt.Sprintf("%s.%s (%s)", path, k, a.Pending))
			}
		}
	}
	check("algorithms", p.Algorithms, scope)
	for i, m := range p.MultiInputFiles {
		if m.Type == InputMultitrack {
			check(fmt.Sprintf("multi_input_files.%d.algorithms", i), m.Algorithms, ScopeTrack)
		}
	}
	for i, sg := range p.Algorithms.In(ScopeSingletrack).Segments("segments") {
		if sg.FilterMethod != "" {
			out = append(out, fmt.Sprintf("algorithms.segments.%d.filtermethod (filter methods per segment)", i))
		}
	}
	if p.SpeechRecognition != nil && pendingFeatures["speech_recognition"] != "" {
		out = append(out, "speech_recognition ("+pendingFeatures["speech_recognition"]+")")
	}
	return out
}

// PendingWarning is the warning PendingSettings call for, or "".
func (p *Production) PendingWarning() string {
	ps := p.PendingSettings()
	if len(ps) == 0 {
		return ""
	}
	return pendingPrefix + strings.Join(ps, ", ")
}

// AddWarning adds msg to the warning message (after what is there, unless
// it already says it) and records at as the warning's status.
func (p *Production) AddWarning(at Status, msg string) {
	msg = ScrubPaths(msg, "")
	switch {
	case msg == "" || strings.Contains(p.WarningMessage, msg):
		return
	case p.WarningMessage != "":
		msg = p.WarningMessage + "; " + msg
	}
	p.SetWarning(at, msg)
}

const pendingPrefix = "not applied by this server yet: "

// ResetWarnings clears what an earlier run warned about before a new run
// at status at warns anew, keeping the warnings of the production's save:
// the pending settings (refreshed) and the chapters dropped past the
// input's end, which the saved production no longer holds, so no run
// could find them to warn about again.
func (p *Production) ResetWarnings(at Status) {
	var keep []string
	for _, part := range strings.Split(p.WarningMessage, "; ") {
		if strings.Contains(part, droppedChaptersMarker) {
			keep = append(keep, part)
		}
	}
	status := p.WarningStatus
	p.WarningMessage, p.WarningStatus = "", nil
	if len(keep) > 0 {
		p.WarningMessage, p.WarningStatus = strings.Join(keep, "; "), status
	}
	p.RefreshPendingWarning(at)
}

// RefreshPendingWarning replaces the parts of the warning message that
// name pending settings and settings without effect
// (SettingsWithoutEffect) with what p asks for now: a setting removed
// stops being warned about, one added starts.
func (p *Production) RefreshPendingWarning(at Status) {
	var keep []string
	for _, part := range strings.Split(p.WarningMessage, "; ") {
		if part != "" && !strings.HasPrefix(part, pendingPrefix) && !strings.HasPrefix(part, noEffectPrefix) {
			keep = append(keep, part)
		}
	}
	if len(keep) == 0 {
		p.WarningMessage, p.WarningStatus = "", nil
	} else {
		p.WarningMessage = strings.Join(keep, "; ")
	}
	p.AddWarning(at, p.PendingWarning())
	p.AddWarning(at, p.noEffectWarning())
}
