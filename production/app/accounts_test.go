package app_test

import (
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production/app"
)

// FuzzValidateRedirectURI: whatever it accepts is absolute, has no
// fragment and no script scheme.
func FuzzValidateRedirectURI(f *testing.F) {
	for _, s := range []string{"https://a.example/cb", "com.example.app:/cb", "javascript:alert(1)", "http:///x", "https://a/#f", "JaVaScRiPt:x", " https://a/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if app.ValidateRedirectURI(s) != nil {
			return
		}
		l := strings.ToLower(s)
		if strings.Contains(s, "#") || strings.HasPrefix(l, "javascript:") || strings.HasPrefix(l, "data:") || !strings.Contains(s, ":") {
			t.Fatalf("accepted %q", s)
		}
	})
}
