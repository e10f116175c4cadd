package transfer

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// config is a service's settings, whichever the type.
type config struct {
	Host, Username, Password string
	Port                     int
	Path                     string
	BaseURL                  string
	Perm                     uint32
	TLS                      bool
	PrivateKey, HostKey      string
	URL                      string // webdav collection
	// s3
	Endpoint, Region, Bucket, KeyPrefix string
	AccessKey, SecretKey, ACL           string
	// Downloadable makes S3 objects downloads (Content-Disposition:
	// attachment) rather than something a browser plays.
	Downloadable bool
}

// SettingsError is what is wrong with a service's settings, by parameter
// name ("" for the settings as a whole). It matches ErrConfig.
type SettingsError struct {
	Fields map[string]string
}

// Error lists the fields and messages, sorted by field.
func (e *SettingsError) Error() string {
	var b strings.Builder
	b.WriteString(ErrConfig.Error())
	for _, k := range slices.Sorted(maps.Keys(e.Fields)) {
		b.WriteString("; ")
		if k != "" {
			b.WriteString(k + ": ")
		}
		b.WriteString(e.Fields[k])
	}
	return b.String()
}

// Is makes errors.Is(err, ErrConfig) true.
func (e *SettingsError) Is(target error) bool { return target == ErrConfig }

// add records the first message of a field.
func (e *SettingsError) add(field, format string, args ...any) {
	if e.Fields == nil {
		e.Fields = map[string]string{}
	}
	if _, ok := e.Fields[field]; !ok {
		e.Fields[field] = fmt.Sprintf(format, args...)
	}
}

// err returns e, or nil without fields.
func (e *SettingsError) err() error {
	if len(e.Fields) == 0 {
		return nil
	}
	return e
}

// settingsError is a SettingsError of one field.
func settingsError(field, format string, args ...any) error {
	e := &SettingsError{}
	e.add(field, format, args...)
	return e
}

// parseConfig reads a service's JSON settings. Clients send numbers and
// booleans as strings or as JSON values; both are accepted. Every bad
// value is reported (a *SettingsError).
func parseConfig(typ string, raw []byte) (config, error) {
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return config{}, settingsError("", "the settings are not a JSON object: %v", err)
		}
	}
	str := func(k string) string {
		switch v := m[k].(type) {
		case string:
			return strings.TrimSpace(v)
		case float64:
			return strconv.FormatFloat(v, 'f', -1, 64)
		case bool:
			return strconv.FormatBool(v)
		}
		return ""
	}
	errs := &SettingsError{}
	boolean := func(k string, def bool) bool {
		t := str(k)
		if t == "" {
			return def
		}
		b, err := strconv.ParseBool(t)
		if err != nil {
			errs.add(k, "%q is not true or false", t)
			return def
		}
		return b
	}
	c := config{Host: str("host"), Username: str("username"), Password: str("password"),
		Path: str("path"), BaseURL: str("base_url"), PrivateKey: str("private_key"),
		HostKey: str("host_key"), URL: str("url")}
	if c.Path == "" {
		c.Path = "/"
	}
	if v, ok := m["password"].(string); ok {
		c.Password = v // passwords keep their spaces
	}
	if c.BaseURL != "" {
		if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.add("base_url", "%q is not an http(s) URL", c.BaseURL)
		}
	}
	switch typ {
	case "ftp", "sftp":
		if c.Host == "" {
			errs.add("host", "is required")
		} else if strings.ContainsAny(c.Host, "/@ ") {
			errs.add("host", "%q is not a host name or address", c.Host)
		}
		def := map[string]int{"ftp": 21, "sftp": 22}[typ]
		c.Port = def
		if p := str("port"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				errs.add("port", "%q is not a port number", p)
			} else {
				c.Port = n
			}
		}
		c.Perm = 0o644
		if p := str("permissions"); p != "" {
			n, err := strconv.ParseUint(p, 8, 32)
			if err != nil || n > 0o777 {
				errs.add("permissions", "%q are not octal file permissions", p)
			} else {
				c.Perm = uint32(n)
			}
		}
		c.TLS = boolean("tls", typ == "ftp")
		if c.HostKey != "" && !strings.HasPrefix(c.HostKey, "SHA256:") {
			errs.add("host_key", "%q is not a SHA256:... fingerprint (ssh-keygen -lf)", c.HostKey)
		}
	case "s3":
		s3Config(&c, str, errs)
		c.Downloadable = boolean("downloadable", false)
	case "webdav":
		u, err := url.Parse(c.URL)
		if c.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs.add("url", "%q is not an http(s) URL of a WebDAV collection", c.URL)
		}
	}
	return c, errs.err()
}

// s3Config checks the settings of an S3-compatible bucket. endpoint is
// host[:port] (HTTPS) or a URL whose scheme says http or https; empty is
// AWS S3.
func s3Config(c *config, str func(string) string, errs *SettingsError) {
	c.Bucket, c.Region, c.ACL = str("bucket"), str("region"), str("canned_acl")
	c.AccessKey, c.SecretKey = str("access_key"), str("secret_key")
	if !validBucket(c.Bucket) {
		errs.add("bucket", "%q is not an S3 bucket name", c.Bucket)
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	switch c.ACL {
	case "", "private", "public-read":
	default:
		errs.add("canned_acl", "%q is not private or public-read", c.ACL)
	}
	c.KeyPrefix = strings.TrimPrefix(str("key_prefix"), "/")
	if c.KeyPrefix != "" && !strings.HasSuffix(c.KeyPrefix, "/") {
		c.KeyPrefix += "/"
	}
	if strings.Contains("/"+c.KeyPrefix, "/../") || strings.Contains(c.KeyPrefix, "//") {
		errs.add("key_prefix", "%q has a .. or an empty path segment", c.KeyPrefix)
	}
	c.Endpoint, c.TLS = str("endpoint"), true
	if c.Endpoint == "" {
		c.Endpoint = "s3.amazonaws.com"
	}
	if strings.Contains(c.Endpoint, "://") {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			errs.add("endpoint", "%q is not host:port or an http(s)://host:port URL", c.Endpoint)
			return
		}
		c.Endpoint, c.TLS = u.Host, u.Scheme == "https"
	} else if strings.ContainsAny(c.Endpoint, "/?#@ ") {
		errs.add("endpoint", "%q is not host:port", c.Endpoint)
	}
}

// validBucket reports whether name is a DNS-compatible bucket name.
func validBucket(name string) bool {
	if len(name) < 3 || len(name) > 63 || name[0] == '.' || name[0] == '-' || name[len(name)-1] == '.' || name[len(name)-1] == '-' {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return false
		}
	}
	return !strings.Contains(name, "..")
}
