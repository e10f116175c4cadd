package auth_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/storage"
)

// FuzzTokenEndpoint throws arbitrary bodies, content types and
// Authorization headers at the token endpoint: it must never panic, never
// answer 5xx, and never issue a token (no valid credentials exist).
func FuzzTokenEndpoint(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", "grant_type=password&username=alice&password=x&client_id=c", "")
	f.Add("application/x-www-form-urlencoded", "grant_type=authorization_code&code=abc&redirect_uri=https://a/cb&client_id=c&client_secret=s&code_verifier=v", "Basic Yzpz")
	f.Add("multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"grant_type\"\r\n\r\npassword\r\n--XX--\r\n", "Basic %%%")
	f.Add("multipart/form-data; boundary=XX", "--XX\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\n\r\nxx\r\n--XX--\r\n", "")
	f.Add("text/plain", "grant_type=password", "Bearer x")
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, contentType, body, authorization string) {
		req := httptest.NewRequest("POST", "/oauth2/token/", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == 200 || rec.Code >= 500 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var m map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m["error"] == "" {
			t.Fatalf("error body %q: %v", rec.Body, err)
		}
	})
}

// FuzzAuthenticate feeds arbitrary Authorization headers and query strings
// to the middleware: only 401 or 429, never a user.
func FuzzAuthenticate(f *testing.F) {
	f.Add("Bearer abc", "bearer_token=abc")
	f.Add("Basic YWxpY2U6cGFzc3dvcmQ=", "")
	f.Add("basic", "bearer_token=%zz")
	f.Add("", "bearer_token=")
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, authorization, rawQuery string) {
		req := httptest.NewRequest("GET", "/api/me", nil)
		req.URL.RawQuery = rawQuery
		if authorization != "" {
			req.Header["Authorization"] = []string{authorization}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 401 && rec.Code != 429 {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if !bytes.Contains(rec.Body.Bytes(), []byte(`"status_code"`)) {
			t.Fatalf("body %q", rec.Body)
		}
	})
}

// fuzzHandler is a service with user alice (an unguessable password) and
// a confidential client "c" with secret "s", so that fuzzed requests reach
// the grant code rather than stopping at client authentication.
func fuzzHandler(f *testing.F) http.Handler {
	e := newEnv(f, nil)
	e.user("alice", storage.NewToken())
	c := storage.OAuthClient{ID: "c", Name: "fuzz", SecretHash: storage.HashToken("s"), RedirectURIs: []string{"https://a/cb"}}
	if err := e.st.CreateOAuthClient(f.Context(), &c); err != nil {
		f.Fatal(err)
	}
	return e.srv.Config.Handler
}
