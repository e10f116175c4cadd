// Package services is the catalogue of the external service types a user
// can register: the file transfer types of storage/transfer (ftp, sftp,
// webdav, s3), which are incoming or outgoing services, and the speech
// recognizer types of package speech (pocketsphinx, whisper, openai),
// which a production names in speech_recognition. It gives every type one
// way to be listed, checked, named and tested, so the API, the web page
// and the command line register services alike, and it builds the
// recognizer of a speech service for the job runner.
package services

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/pocketsphinx"
	"github.com/audiopost/audiopost/speech/recognizers"
	"github.com/audiopost/audiopost/speech/whisperhttp"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
)

// speechTypes describe the recognizer types as service types. Their
// settings are speech.Config's. A PocketSphinx model directory is a path
// on the server, which users do not choose: the operator installs
// models, so a registration takes the default English model.
var speechTypes = []transfer.Type{
	{Name: pocketsphinx.Type, DisplayName: "PocketSphinx speech recognition (offline, English)"},
	{Name: "whisper", DisplayName: "Whisper-compatible transcription server", Parameters: []transfer.Parameter{
		{Name: "base_url", DisplayName: "Server URL", Kind: "text", Default: "", Required: true,
			Hint: "The server's address, like http://whisper.lan:8000/v1; /audio/transcriptions is appended."},
		{Name: "model", DisplayName: "Model", Kind: "text", Default: whisperhttp.DefaultModel, Hint: "The model name the server knows."},
		{Name: "api_key", DisplayName: "API key", Kind: "password", Default: "", Hint: "Sent as a bearer token, if the server wants one."},
	}},
	{Name: "openai", DisplayName: "OpenAI speech to text", Parameters: []transfer.Parameter{
		{Name: "api_key", DisplayName: "API key", Kind: "password", Default: "", Required: true},
		{Name: "model", DisplayName: "Model", Kind: "text", Default: whisperhttp.DefaultModel, Hint: "whisper-1, or another transcription model."},
		{Name: "base_url", DisplayName: "Server URL", Kind: "text", Default: "", Hint: "Empty: " + whisperhttp.OpenAIBaseURL + "."},
	}},
}

// Types returns every type users can register: the file transfers, then
// the speech recognizers.
func Types() []transfer.Type {
	return append(transfer.Types(), speechTypes...)
}

// Lookup returns the type called name.
func Lookup(name string) (transfer.Type, bool) {
	for _, t := range Types() {
		if t.Name == name {
			return t, true
		}
	}
	return transfer.Type{}, false
}

// TypeNames returns the names of Types.
func TypeNames() []string {
	var out []string
	for _, t := range Types() {
		out = append(out, t.Name)
	}
	return out
}

// IsSpeech reports whether typ is a speech recognizer type: a service that
// holds no files, neither incoming nor outgoing.
func IsSpeech(typ string) bool {
	return slices.ContainsFunc(speechTypes, func(t transfer.Type) bool { return t.Name == typ })
}

// UnsupportedTypeError explains why typ cannot be registered; it wraps
// transfer.ErrUnsupportedType.
func UnsupportedTypeError(typ string) error {
	err := transfer.UnsupportedTypeError(typ)
	// transfer lists its own types; the catalogue has more.
	msg := strings.Replace(err.Error(), strings.Join(transfer.TypeNames(), ", "), strings.Join(TypeNames(), ", "), 1)
	return fmt.Errorf("%w: %s", transfer.ErrUnsupportedType, strings.TrimPrefix(msg, transfer.ErrUnsupportedType.Error()+": "))
}

// CheckSettings validates the settings of a service of type typ as a user
// sends them and returns them normalized (see transfer.CheckSettings),
// or transfer.ErrUnsupportedType, or a *transfer.SettingsError naming
// every bad field.
func CheckSettings(typ string, settings map[string]any) (map[string]any, error) {
	if !IsSpeech(typ) {
		if !transfer.Supported(typ) {
			return nil, UnsupportedTypeError(typ)
		}
		return transfer.CheckSettings(typ, settings)
	}
	t, _ := Lookup(typ)
	errs := map[string]string{}
	out := map[string]any{}
	for k, v := range settings {
		p, ok := t.Parameter(k)
		if !ok {
			msg := fmt.Sprintf("is not a parameter of %s services", typ)
			if typ == pocketsphinx.Type && k == "model" {
				msg = "PocketSphinx models are installed by the server's operator; registrations use the default English model"
			}
			errs[k] = msg
			continue
		}
		s, ok := v.(string)
		if !ok {
			errs[k] = "must be a string"
			continue
		}
		if p.Kind != "password" {
			s = strings.TrimSpace(s)
		}
		if s != "" {
			out[k] = s
		}
	}
	for _, p := range t.Parameters {
		if _, ok := out[p.Name]; p.Required && !ok && errs[p.Name] == "" {
			errs[p.Name] = "is required"
		}
	}
	if len(errs) == 0 {
		for k, msg := range speech.ValidateConfig(speechConfig(typ, out)) {
			errs[k] = msg
		}
	}
	if len(errs) > 0 {
		return nil, &transfer.SettingsError{Fields: errs}
	}
	return out, nil
}

func speechConfig(typ string, s map[string]any) speech.Config {
	str := func(k string) string { v, _ := s[k].(string); return v }
	return speech.Config{Type: typ, BaseURL: str("base_url"), Model: str("model"), APIKey: str("api_key")}
}

// DefaultName names a service after its type and where it is.
func DefaultName(typ string, settings map[string]any) string {
	if !IsSpeech(typ) {
		return transfer.DefaultName(typ, settings)
	}
	t, _ := Lookup(typ)
	if u, err := url.Parse(fmt.Sprint(settings["base_url"])); err == nil && u.Host != "" {
		return t.DisplayName + " " + u.Host
	}
	return t.DisplayName
}

// Test checks that a service works: a file transfer connects, logs in and
// lists its directory (the entries are returned); a speech recognizer
// finds its program, or its server accepts a connection (no audio is
// sent: a recognition may cost money), and returns no entries.
func Test(ctx context.Context, svc storage.Service, opt transfer.Options) ([]transfer.Entry, error) {
	if !IsSpeech(svc.Type) {
		return transfer.Test(ctx, svc, opt)
	}
	cfg, err := speech.ParseConfig(svc.Type, svc.Config)
	if err != nil {
		return nil, err
	}
	if svc.Type == pocketsphinx.Type {
		if _, err := exec.LookPath(pocketsphinx.Program); err != nil {
			return nil, fmt.Errorf("%w: %s is not installed on this server (Debian packages %s)", speech.ErrUnavailable, pocketsphinx.Program, pocketsphinx.Packages)
		}
		return nil, nil
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = whisperhttp.OpenAIBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, &transfer.SettingsError{Fields: map[string]string{"base_url": err.Error()}}
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	dial := opt.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	c, err := dial(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", speech.ErrUnavailable, err)
	}
	c.Close()
	return nil, nil
}

// ErrorField names the setting a failed Test most likely concerns.
func ErrorField(typ string, err error) string {
	if !IsSpeech(typ) {
		return transfer.ErrorField(typ, err)
	}
	var se *transfer.SettingsError
	if errors.As(err, &se) {
		for k := range se.Fields {
			return k
		}
	}
	if typ == pocketsphinx.Type {
		return "type"
	}
	return "base_url"
}

// Recognizer builds the recognizer of a speech recognition service. Its
// HTTP requests dial with opt.Dial when set: the server-side address
// policy that every other connection to a user's server follows.
func Recognizer(svc storage.Service, opt transfer.Options) (speech.Recognizer, error) {
	if !IsSpeech(svc.Type) {
		return nil, fmt.Errorf("%w: service %q (%s) is not a speech recognition service", transfer.ErrUnsupportedType, svc.DisplayName, svc.Type)
	}
	cfg, err := speech.ParseConfig(svc.Type, svc.Config)
	if err != nil {
		return nil, err
	}
	rec, err := recognizers.New(cfg)
	if err != nil {
		return nil, err
	}
	if c, ok := rec.(*whisperhttp.Client); ok && opt.Dial != nil {
		c.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: opt.Dial, ForceAttemptHTTP2: true}}
	}
	return rec, nil
}

// publicFields are the settings every service shows besides its type's
// parameters that are no credential: the API spec's type-specific
// fields.
var publicFields = []string{
	"email", "path", "host", "port", "base_url", "permissions", "url",
	"libsyn_show_slug", "libsyn_directory", "bucket", "canned_acl", "key_prefix", "program_keyword",
}

// PublicKeys are the settings of a service of type typ that its owner is
// shown (the API, the pages, the command line): every parameter of the
// type that is no credential, and the spec's type-specific fields.
// Passwords and keys stay private.
func PublicKeys(typ string) []string {
	var keys []string
	if t, ok := Lookup(typ); ok {
		for _, p := range t.Parameters {
			if !storage.IsCredentialKey(p.Name) {
				keys = append(keys, p.Name)
			}
		}
	}
	for _, k := range publicFields {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// Settings returns a service's settings as a map, numbers as
// json.Number.
func Settings(svc storage.Service) map[string]any {
	m := map[string]any{}
	if len(svc.Config) > 0 {
		dec := json.NewDecoder(bytes.NewReader(svc.Config))
		dec.UseNumber()
		dec.Decode(&m)
	}
	return m
}

// PublicSettings are the settings of svc named by PublicKeys that it has.
func PublicSettings(svc storage.Service) map[string]any {
	all := Settings(svc)
	out := map[string]any{}
	for _, k := range PublicKeys(svc.Type) {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out
}

// CredentialsSet lists which credentials a service has, sorted, never
// their values (for "a password is set").
func CredentialsSet(svc storage.Service) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(Settings(svc))) {
		if storage.IsCredentialKey(k) {
			out = append(out, k)
		}
	}
	return out
}
