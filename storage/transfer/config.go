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
	// s3
	Endpoint, Region, Bucket, KeyPrefix string
	AccessKey, SecretKey, ACL           string
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
	case "s3":
		return s3Config(c, str)
	case "webdav":
		u, err := url.Parse(c.URL)
		if c.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("%w: url %q is not an http(s) URL of a WebDAV collection", ErrConfig, c.URL)
		}
	}
	return c, nil
}

// s3Config checks the settings of an S3-compatible bucket. endpoint is
// host[:port] (HTTPS) or a URL whose scheme says http or https; empty is
// AWS S3.
func s3Config(c config, str func(string) string) (config, error) {
	c.Bucket, c.Region, c.ACL = str("bucket"), str("region"), str("canned_acl")
	c.AccessKey, c.SecretKey = str("access_key"), str("secret_key")
	if !validBucket(c.Bucket) {
		return c, fmt.Errorf("%w: bucket %q is not an S3 bucket name", ErrConfig, c.Bucket)
	}
	if c.Region == "" {
		c.Region = "us-east-1"
	}
	switch c.ACL {
	case "", "private", "public-read":
	default:
		return c, fmt.Errorf("%w: canned_acl %q is not private or public-read", ErrConfig, c.ACL)
	}
	c.KeyPrefix = strings.TrimPrefix(str("key_prefix"), "/")
	if c.KeyPrefix != "" && !strings.HasSuffix(c.KeyPrefix, "/") {
		c.KeyPrefix += "/"
	}
	if strings.Contains("/"+c.KeyPrefix, "/../") || strings.Contains(c.KeyPrefix, "//") {
		return c, fmt.Errorf("%w: key_prefix %q", ErrConfig, c.KeyPrefix)
	}
	c.Endpoint, c.TLS = str("endpoint"), true
	if c.Endpoint == "" {
		c.Endpoint = "s3.amazonaws.com"
	}
	if strings.Contains(c.Endpoint, "://") {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return c, fmt.Errorf("%w: endpoint %q is not host:port or an http(s)://host:port URL", ErrConfig, c.Endpoint)
		}
		c.Endpoint, c.TLS = u.Host, u.Scheme == "https"
	} else if strings.ContainsAny(c.Endpoint, "/?#@ ") {
		return c, fmt.Errorf("%w: endpoint %q is not host:port", ErrConfig, c.Endpoint)
	}
	return c, nil
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
