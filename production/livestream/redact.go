package livestream

import (
	"net/url"
	"regexp"
)

// Redact returns a URL without its password, for pages, status and
// logs: Icecast URLs carry the source password.
func Redact(s string) string { return redact(s) }

func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return redactText(s)
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
	}
	return u.String()
}

var credentials = regexp.MustCompile(`(://[^:/@\s]*:)[^@\s]*@`)

// redactText removes the passwords of the URLs in a message (ffmpeg's
// complaints name the URL they failed on).
func redactText(s string) string { return credentials.ReplaceAllString(s, "${1}xxx@") }
