package transfer

import (
	"encoding/json"
	"fmt"
	"net/url"
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
}

// parseConfig reads a service's JSON settings. Clients send numbers and
// booleans as strings or as JSON values; both are accepted.
func parseConfig(typ string, raw []byte) (config, error) {
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return config{}, fmt.Errorf("%w: not a JSON object: %v", ErrConfig, err)
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
	c := config{Host: str("host"), Username: str("username"), Password: str("password"),
		Path: str("path"), BaseURL: str("base_url"), PrivateKey: str("private_key"),
		HostKey: str("host_key"), URL: str("url")}
	if c.Path == "" {
		c.Path = "/"
	}
	if v, ok := m["password"].(string); ok {
		c.Password = v // passwords keep their spaces
	}
	switch typ {
	case "ftp", "sftp":
		if c.Host == "" {
			return c, fmt.Errorf("%w: host is required", ErrConfig)
		}
		def := map[string]int{"ftp": 21, "sftp": 22}[typ]
		c.Port = def
		if p := str("port"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return c, fmt.Errorf("%w: port %q is not a port number", ErrConfig, p)
			}
			c.Port = n
		}
		c.Perm = 0o644
		if p := str("permissions"); p != "" {
			n, err := strconv.ParseUint(p, 8, 32)
			if err != nil || n > 0o777 {
				return c, fmt.Errorf("%w: permissions %q are not octal file permissions", ErrConfig, p)
			}
			c.Perm = uint32(n)
		}
		c.TLS = typ == "ftp"
		if t := str("tls"); t != "" {
			b, err := strconv.ParseBool(t)
			if err != nil {
				return c, fmt.Errorf("%w: tls %q is not true or false", ErrConfig, t)
			}
			c.TLS = b
		}
	case "webdav":
		u, err := url.Parse(c.URL)
		if c.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("%w: url %q is not an http(s) URL of a WebDAV collection", ErrConfig, c.URL)
		}
	}
	return c, nil
}
