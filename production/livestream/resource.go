package livestream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// State is where a stored live stream is in its life; it is the stored
// resource's status.
type State int

// The states. A started stream is Starting until a worker runs it, then
// Running; Stop makes it Stopped from any state, and a stream that no
// worker could keep running ends in Failed.
const (
	Stopped State = iota
	Starting
	Running
	Failed
)

var stateNames = [...]string{"stopped", "starting", "running", "failed"}

// String returns the state's API name.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// MarshalJSON writes the state's name.
func (s State) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads a state's name.
func (s *State) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err != nil {
		return err
	}
	for i, n := range stateNames {
		if n == name {
			*s = State(i)
			return nil
		}
	}
	return fmt.Errorf("livestream: unknown state %q", name)
}

// LiveStream is a stored live stream, a resource of its owner: where it
// reads, where it sends and how it processes.
type LiveStream struct {
	UUID         string        `json:"uuid"`
	Name         string        `json:"name"`
	Source       string        `json:"source"`
	Destinations []Destination `json:"destinations"`
	// Fallback is played while the source is down (silence without).
	Fallback string `json:"fallback,omitempty"`
	// Preset is the preset whose algorithms were taken when the stream
	// was created; Algorithms are the resolved settings (the preset's with
	// the request's over them).
	Preset     string                     `json:"preset,omitempty"`
	Algorithms production.AlgorithmValues `json:"algorithms"`
	// Warnings name the settings the live graph does not apply.
	Warnings []string  `json:"warnings,omitempty"`
	State    State     `json:"state"`
	Error    string    `json:"error,omitempty"`
	Created  time.Time `json:"created"`
}

// Input is a request to create a live stream: every field as the client
// sent it.
type Input struct {
	Name         string                   `json:"name"`
	Source       string                   `json:"source"`
	Destinations []Destination            `json:"destinations"`
	Fallback     string                   `json:"fallback"`
	Preset       string                   `json:"preset"`
	Algorithms   production.RawAlgorithms `json:"algorithms"`
}

// Errors of the live stream operations, for errors.Is.
var (
	// ErrState means the stream is not in a state the operation applies
	// to (starting a running stream).
	ErrState = errors.New("livestream: not possible in the stream's state")
)

// sourceSchemes and destinationSchemes are the protocols a stream stored
// through the API may use: network ones only, so that no user makes the
// server read or write its own files.
var (
	sourceSchemes      = []string{"http", "https", "rtmp", "rtmps", "srt", "icecast"}
	destinationSchemes = []string{"icecast", "rtmp", "rtmps", "srt", "http", "https"}
)

func checkURL(ctx context.Context, check func(context.Context, string) error, raw string, schemes []string, path string, errs production.FieldErrors) {
	if raw == "" {
		errs.Add(path, "required")
		return
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		errs.Add(path, "must be an absolute URL")
		return
	}
	ok := false
	for _, sc := range schemes {
		ok = ok || strings.EqualFold(u.Scheme, sc)
	}
	if !ok {
		errs.Addf(path, "scheme %q is not allowed; use one of %s", u.Scheme, strings.Join(schemes, ", "))
		return
	}
	if check != nil {
		if err := check(ctx, raw); err != nil {
			errs.Add(path, err.Error())
		}
	}
}

// New validates in and returns the live stream it asks for, stopped.
// presets holds the preset in names (looked up by the caller, as for a
// production); check, when set, vets every address the stream would
// reach (its source, destinations and fallback) for the server's
// outbound policy, its error the field's message. Problems are
// production.FieldErrors (the API's form_errors), one per field:
// "source", "destinations.N.url", "destinations.N.format", "preset",
// "algorithms.KEY".
func New(ctx context.Context, in Input, presets production.Presets, check func(ctx context.Context, rawURL string) error) (*LiveStream, error) {
	errs := production.FieldErrors{}
	checkURL(ctx, check, in.Source, sourceSchemes, "source", errs)
	if len(in.Destinations) == 0 {
		errs.Add("destinations", "at least one destination is required")
	}
	for i, d := range in.Destinations {
		p := fmt.Sprintf("destinations.%d", i)
		checkURL(ctx, check, d.URL, destinationSchemes, p+".url", errs)
		if !validFormat(d.Format) {
			errs.Addf(p+".format", "%q is not allowed; choose one of %s", d.Format, strings.Join(ffmpeg.LiveFormats(), ", "))
		}
		if d.Bitrate < 0 || d.Bitrate > 1024 {
			errs.Add(p+".bitrate", "must be 0 (the format's default) to 1024 kbps")
		}
	}
	if in.Fallback != "" {
		checkURL(ctx, check, in.Fallback, []string{"http", "https"}, "fallback", errs)
	}
	if len(in.Name) > 200 {
		errs.Add("name", "at most 200 characters")
	}
	values := production.AlgorithmValues{}
	if in.Preset != "" {
		if pr := presets[in.Preset]; pr == nil {
			errs.Add("preset", "no such preset")
		} else {
			values = pr.Algorithms.Clone()
		}
	}
	if in.Algorithms != nil {
		values = values.Merge(production.ParseAlgorithms(in.Algorithms, "algorithms", errs))
	}
	_, warnings, err := Config(values)
	var fe production.FieldErrors
	switch {
	case errors.As(err, &fe):
		errs.Merge("", fe)
	case err != nil:
		errs.Add("algorithms", err.Error())
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return &LiveStream{Name: in.Name, Source: in.Source, Destinations: in.Destinations, Fallback: in.Fallback,
		Preset: in.Preset, Algorithms: values, Warnings: warnings}, nil
}

// Decode turns a stored resource into its LiveStream.
func Decode(r storage.Resource) (*LiveStream, error) {
	ls := &LiveStream{}
	if err := json.Unmarshal(r.Doc, ls); err != nil {
		return nil, fmt.Errorf("live stream %s: stored document: %w", r.UUID, err)
	}
	ls.UUID, ls.State, ls.Created = r.UUID, State(r.Status), r.Created
	return ls, nil
}

// MaxAttempts is how often a live stream's job may be claimed: every
// worker death costs one, and a stream should outlive many.
const MaxAttempts = 1000

// Startable reports why a stream in state s cannot be started: one that
// is starting or running is ErrState.
func (s State) Startable() error {
	if s == Starting || s == Running {
		return fmt.Errorf("%w: the stream is %s", ErrState, s)
	}
	return nil
}

// Report is a live stream with its latest figures.
type Report struct {
	*LiveStream
	// Figures are the worker's latest report (nil before the first).
	Figures *Figures `json:"figures"`
}
