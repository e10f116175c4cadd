package transfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/storage"
)

// Parameter is one setting of a service type, as a registration form
// asks for it.
type Parameter struct {
	Name        string
	DisplayName string
	// Kind is text, password, number, checkbox or select. Passwords are
	// credentials (storage.CredentialKeys), which stores keep sealed and
	// listings never show.
	Kind     string
	Default  any
	Options  []Option // of a select
	Required bool
	// Hint explains the parameter in a sentence, for forms and -help.
	Hint string
}

// Option is one choice of a select parameter.
type Option struct {
	DisplayName, Value string
}

// Type is a kind of external service that Open connects to.
type Type struct {
	Name, DisplayName string
	// Parameters are the settings, in the order a form asks for them.
	Parameters []Parameter
	// Publish names the parameters of an outgoing service reference (a
	// production's outgoing_services entry) that the type applies; see
	// ForPublish.
	Publish []string
}

// Parameter returns the type's parameter called name.
func (t Type) Parameter(name string) (Parameter, bool) {
	for _, p := range t.Parameters {
		if p.Name == name {
			return p, true
		}
	}
	return Parameter{}, false
}

// Types returns the service types this package transfers files with,
// sorted by name. They are the types users can register.
func Types() []Type {
	text := func(name, display, def, hint string) Parameter {
		return Parameter{Name: name, DisplayName: display, Kind: "text", Default: def, Hint: hint}
	}
	req := func(p Parameter) Parameter { p.Required = true; return p }
	secret := func(name, display, hint string) Parameter {
		return Parameter{Name: name, DisplayName: display, Kind: "password", Default: "", Hint: hint}
	}
	port := func(def int) Parameter {
		return Parameter{Name: "port", DisplayName: "Port", Kind: "number", Default: def}
	}
	baseURL := text("base_url", "Public base URL", "", "The URL the directory is published at: the result URLs of copied files are made from it.")
	dir := text("path", "Directory", "/", "Where files are read from and written to.")
	sharing := Parameter{Name: "permissions", DisplayName: "File permissions (octal)", Kind: "text", Default: "644",
		Hint: "Mode of the copied files; an outgoing transfer with sharing private clears the group and other bits, public adds their read bits."}
	return []Type{
		{Name: "ftp", DisplayName: "FTP", Parameters: []Parameter{
			req(text("host", "Host", "", "")), port(21), text("username", "Username", "", "Empty: anonymous."),
			secret("password", "Password", ""), dir, baseURL,
			{Name: "tls", DisplayName: "Use explicit TLS (FTPS)", Kind: "checkbox", Default: true,
				Hint: "AUTH TLS on the control connection and TLS on every data connection."},
		}},
		{Name: "s3", DisplayName: "S3-compatible object storage", Parameters: []Parameter{
			text("endpoint", "Endpoint", "", "host:port, or an http:// or https:// URL; empty: Amazon S3."),
			text("region", "Region", "us-east-1", ""), req(text("bucket", "Bucket", "", "")),
			text("key_prefix", "Key prefix", "", "The \"directory\": files are the objects right under it."),
			text("access_key", "Access key ID", "", "Empty with an empty secret key: anonymous requests."),
			secret("secret_key", "Secret access key", ""),
			{Name: "canned_acl", DisplayName: "Access of uploaded files", Kind: "select", Default: "private", Options: []Option{
				{DisplayName: "Private", Value: "private"}, {DisplayName: "Public read", Value: "public-read"}},
				Hint: "An outgoing transfer's sharing or privacy overrides it."},
			{Name: "downloadable", DisplayName: "Serve files as downloads", Kind: "checkbox", Default: false,
				Hint: "Content-Disposition: attachment, so that browsers save the files instead of playing them; an outgoing transfer's downloadable overrides it."},
			baseURL,
		}, Publish: []string{"sharing", "privacy", "downloadable"}},
		{Name: "sftp", DisplayName: "SFTP", Parameters: []Parameter{
			req(text("host", "Host", "", "")), port(22), req(text("username", "Username", "", "")),
			secret("password", "Password", "A password or a private key is required."),
			secret("private_key", "Private key (PEM or OpenSSH)", ""),
			text("host_key", "Host key fingerprint", "", "SHA256:... as ssh-keygen -lf prints it; empty accepts any server key."),
			dir, baseURL, sharing,
		}, Publish: []string{"sharing", "privacy"}},
		{Name: "webdav", DisplayName: "WebDAV", Parameters: []Parameter{
			req(text("url", "Collection URL", "", "http(s) URL of the folder (a WebDAV collection).")),
			text("username", "Username", "", ""), secret("password", "Password", ""),
			text("base_url", "Public base URL", "", "Where the files are published, if not at the collection URL."),
		}},
	}
}

// LookupType returns the type called name.
func LookupType(name string) (Type, bool) {
	for _, t := range Types() {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// TypeNames returns the names of Types.
func TypeNames() []string {
	var out []string
	for _, t := range Types() {
		out = append(out, t.Name)
	}
	return out
}

// DefaultName names a service of type typ after its type and where it
// is: the host, the WebDAV URL's host or the bucket.
func DefaultName(typ string, settings map[string]any) string {
	t, _ := LookupType(typ)
	where := ""
	switch typ {
	case "webdav":
		if u, err := url.Parse(fmt.Sprint(settings["url"])); err == nil {
			where = u.Host
		}
	case "s3":
		where, _ = settings["bucket"].(string)
	default:
		where, _ = settings["host"].(string)
	}
	return strings.TrimSpace(t.DisplayName + " " + where)
}

// hostedPlatforms are the spec's other service kinds: accounts of hosted
// platforms (OAuth logins and their APIs) this package has no connector
// for. Registering one is refused with that reason.
var hostedPlatforms = map[string]string{
	"dropbox": "a file-sync storage", "soundcloud": "an audio hosting", "spreaker": "an audio hosting", "mixcloud": "an audio hosting",
	"youtube": "a video hosting", "libsyn": "a podcast hosting", "archiveorg": "an internet archive", "podtrac": "a podcast statistics hosting",
}

// UnsupportedTypeError explains why a type cannot be registered; it
// wraps ErrUnsupportedType.
func UnsupportedTypeError(typ string) error {
	if kind, ok := hostedPlatforms[typ]; ok {
		return fmt.Errorf("%w: %q is %s platform, which this server has no connector for; it supports %s",
			ErrUnsupportedType, typ, kind, strings.Join(TypeNames(), ", "))
	}
	return fmt.Errorf("%w: unknown service type %q; this server supports %s", ErrUnsupportedType, typ, strings.Join(TypeNames(), ", "))
}

// CheckSettings validates the settings of a service of type typ as a user
// sends them: every key must be a parameter of the type, values must fit
// its kind (numbers and booleans may come as strings), required ones must
// be there, and the whole must be settings Open accepts. It returns the
// settings normalized (numbers as numbers, checkboxes as booleans, text
// trimmed except passwords, empty values left out), or ErrUnsupportedType,
// or a *SettingsError naming every bad field.
func CheckSettings(typ string, settings map[string]any) (map[string]any, error) {
	t, ok := LookupType(typ)
	if !ok {
		return nil, UnsupportedTypeError(typ)
	}
	errs := &SettingsError{}
	out := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		v := settings[k]
		p, ok := t.Parameter(k)
		if !ok {
			msg := fmt.Sprintf("is not a parameter of %s services", typ)
			if typ == "ftp" && k == "permissions" {
				msg = "is not applied over FTP (SITE CHMOD is a server extension; FTP servers apply their own umask): use SFTP to set permissions"
			}
			errs.add(k, "%s", msg)
			continue
		}
		nv, err := normalize(p, v)
		if err != nil {
			errs.add(k, "%v", err)
			continue
		}
		if nv != nil {
			out[k] = nv
		}
	}
	for _, p := range t.Parameters {
		if _, ok := out[p.Name]; p.Required && !ok {
			if _, bad := errs.Fields[p.Name]; !bad {
				errs.add(p.Name, "is required")
			}
		}
	}
	if typ == "sftp" && out["password"] == nil && out["private_key"] == nil {
		errs.add("password", "a password or a private_key is required")
	}
	if typ == "s3" && (out["access_key"] == nil) != (out["secret_key"] == nil) {
		errs.add("secret_key", "access_key and secret_key go together (both empty: anonymous)")
	}
	if len(errs.Fields) > 0 {
		return nil, errs
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if _, err := parseConfig(typ, raw); err != nil {
		return nil, err
	}
	if typ == "sftp" {
		if k, _ := out["private_key"].(string); k != "" {
			if _, err := sshSigner(k); err != nil {
				return nil, settingsError("private_key", "is not a private key in PEM or OpenSSH format: %v", err)
			}
		}
	}
	return out, nil
}

// normalize checks one value against its parameter; nil means empty.
func normalize(p Parameter, v any) (any, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		s = x
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		s = x.String()
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case bool:
		s = strconv.FormatBool(x)
	default:
		return nil, fmt.Errorf("must be a %s value, not %T", p.Kind, v)
	}
	if p.Kind != "password" {
		s = strings.TrimSpace(s)
	}
	if s == "" {
		return nil, nil
	}
	switch p.Kind {
	case "number":
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", s)
		}
		return n, nil
	case "checkbox":
		switch strings.ToLower(s) {
		case "true", "1", "on", "yes":
			return true, nil
		case "false", "0", "off", "no":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false", s)
	case "select":
		for _, o := range p.Options {
			if o.Value == s {
				return s, nil
			}
		}
		var vals []string
		for _, o := range p.Options {
			vals = append(vals, o.Value)
		}
		return nil, fmt.Errorf("%q is not one of %s", s, strings.Join(vals, ", "))
	case "password":
		return s, nil // keys span lines; passwords are what they are
	}
	if strings.ContainsAny(s, "\x00\r\n") {
		return nil, fmt.Errorf("must be one line of text")
	}
	return s, nil
}

// Test connects to the service, logs in and lists its directory: what
// registering a service checks.
func Test(ctx context.Context, svc storage.Service, opt Options) ([]Entry, error) {
	c, err := Open(ctx, svc, opt)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.List(ctx)
}

// ErrorField names the parameter of a service type that a failure of
// Open or Test most likely concerns, for showing it next to that field:
// the bad setting, the password (or secret key) a server refused, the
// host key that did not match, or else the address that was tried.
func ErrorField(typ string, err error) string {
	var se *SettingsError
	switch {
	case errors.As(err, &se):
		for _, k := range slices.Sorted(maps.Keys(se.Fields)) {
			return k
		}
	case errors.Is(err, ErrHostKey):
		return "host_key"
	case errors.Is(err, ErrAuth):
		if typ == "s3" {
			return "secret_key"
		}
		return "password"
	}
	switch typ {
	case "webdav":
		return "url"
	case "s3":
		return "endpoint"
	}
	return "host"
}

// Publish is what one entry of a production's outgoing_services asks of
// its service: the spec's type-specific parameters, which the spec
// defines for hosting platforms. ForPublish maps those with a meaning for
// a file transfer onto the service's settings.
type Publish struct {
	Downloadable *bool
	Sharing      string // public or private
	Privacy      string // public or private
	TrackType    string
	Category     string
	Show         string
}

// ForPublish returns the service with the publish parameters its type
// applies folded into its settings, and the names of the parameters that
// were set but mean nothing to the type (the caller warns about them):
//
//	sharing, privacy  sftp: private clears the group and other bits of the
//	                  files' permissions, public adds their read bits;
//	                  s3: the canned ACL (private or public-read).
//	                  ftp, webdav: ignored (FTP cannot set permissions,
//	                  WebDAV has none)
//	downloadable      s3: files are served as downloads (Content-Disposition:
//	                  attachment) or not; others: ignored (the server decides)
//	track_type, category, show
//	                  ignored: hosting platforms' own fields
//
// sharing and privacy mean the same to a file transfer; set both, they
// must agree.
func ForPublish(svc storage.Service, p Publish) (storage.Service, []string, error) {
	t, _ := LookupType(svc.Type)
	applies := func(name string) bool { return slices.Contains(t.Publish, name) }
	var ignored []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"track_type", p.TrackType != ""}, {"category", p.Category != ""}, {"show", p.Show != ""},
		{"downloadable", p.Downloadable != nil}, {"sharing", p.Sharing != ""}, {"privacy", p.Privacy != ""}} {
		if f.set && !applies(f.name) {
			ignored = append(ignored, f.name)
		}
	}
	public := p.Sharing
	if p.Privacy != "" && applies("privacy") {
		if public != "" && public != p.Privacy {
			return svc, ignored, fmt.Errorf("%w: sharing %s and privacy %s disagree", ErrConfig, p.Sharing, p.Privacy)
		}
		public = p.Privacy
	}
	if !applies("sharing") {
		public = ""
	}
	if public == "" && (p.Downloadable == nil || !applies("downloadable")) {
		return svc, ignored, nil
	}
	m := map[string]any{}
	if len(svc.Config) > 0 {
		if err := json.Unmarshal(svc.Config, &m); err != nil {
			return svc, ignored, settingsError("", "the settings are not a JSON object: %v", err)
		}
	}
	switch svc.Type {
	case "sftp":
		cfg, err := parseConfig(svc.Type, svc.Config)
		if err != nil {
			return svc, ignored, err
		}
		perm := cfg.Perm
		switch public {
		case "private":
			perm &^= 0o077
		case "public":
			perm |= 0o444
		}
		m["permissions"] = fmt.Sprintf("%o", perm)
	case "s3":
		switch public {
		case "private":
			m["canned_acl"] = "private"
		case "public":
			m["canned_acl"] = "public-read"
		}
		if p.Downloadable != nil {
			m["downloadable"] = *p.Downloadable
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return svc, ignored, err
	}
	svc.Config = raw
	return svc, ignored, nil
}
