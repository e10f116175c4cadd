package app

import (
	"fmt"
	"net/url"
	"strings"
)

// Download kinds: the first segment after /api/download/ in a file's URL.
const (
	// DownloadResult is an output file: productions/{uuid}/output/{filename}.
	DownloadResult = "audio-result"
	// DownloadUpload is an input, cover image, thumbnail or chapter image,
	// and intros and tracks as {id}/{filename}.
	DownloadUpload = "audio-upload"
	// DownloadPreset is a preset's cover image or thumbnail.
	DownloadPreset = "preset"
)

// Links builds the URLs of the service's files and pages from its base
// URL. Stored productions refer to their covers and chapter images by
// these URLs, and a URL of this server given as a cover or chapter image
// is read from the store rather than fetched.
type Links struct {
	base   string // the base URL without trailing slash
	prefix string // its path without trailing slash
}

// NewLinks returns the links of a service at base, an absolute http(s)
// URL without query.
func NewLinks(base string) (Links, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return Links{}, fmt.Errorf("app: base URL %q must be an absolute http(s) URL without query", base)
	}
	return Links{base: strings.TrimSuffix(base, "/"), prefix: strings.TrimSuffix(u.Path, "/")}, nil
}

// Base is the base URL without a trailing slash.
func (l Links) Base() string { return l.base }

// Prefix is the base URL's path without a trailing slash ("" at the root).
func (l Links) Prefix() string { return l.prefix }

// Download is the absolute URL of a stored file: kind (DownloadResult,
// ...), the production's or preset's uuid and the file's name segments.
func (l Links) Download(kind, uuid string, name ...string) string {
	var b strings.Builder
	b.WriteString(l.base)
	b.WriteString("/api/download/")
	b.WriteString(kind)
	b.WriteByte('/')
	b.WriteString(url.PathEscape(uuid))
	for _, n := range name {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(n))
	}
	return b.String()
}

// ParseDownload splits a download URL of this server into its kind,
// uuid and file name. own is false for any other URL; ok is false for
// one of this server's that names no file.
func (l Links) ParseDownload(rawURL string) (kind, uuid, name string, own, ok bool) {
	prefix := l.base + "/api/download/"
	if !strings.HasPrefix(rawURL, prefix) {
		return "", "", "", false, false
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", "", "", false, false
	}
	rest := strings.TrimPrefix(u.EscapedPath(), strings.TrimSuffix(escapedPath(prefix), "/")+"/")
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return "", "", "", true, false
	}
	for i := range parts {
		if parts[i], err = url.PathUnescape(parts[i]); err != nil {
			return "", "", "", true, false
		}
	}
	return parts[0], parts[1], parts[2], true, true
}

// IsAbsURL reports whether s already is a URL, as opposed to the name of
// a file the engine stored.
func IsAbsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != ""
}

func escapedPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.EscapedPath()
}
