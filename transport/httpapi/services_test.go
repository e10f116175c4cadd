package httpapi_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/browsertest"
	"github.com/audiopost/audiopost/storage/blob/s3test"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/storage/transfer/transfertest"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// TestMain stops the S3 server the service tests start and the
// Chromium of the page tests.
func TestMain(m *testing.M) {
	code := m.Run()
	browsertest.Stop()
	s3test.Stop()
	os.Exit(code)
}

// withLoopback lets the handler reach the test servers on loopback.
func withLoopback(c *httpapi.Config) { c.Transfer = &transfer.Options{} }

// Registering services of every type through the API against real
// servers: the connection is tested before anything is stored, a refused
// login or a bad setting is a form error of its field, credentials are
// never shown, and the service then lists its files.
func TestServiceRegistration(t *testing.T) {
	for _, proto := range []string{"sftp", "webdav", "s3", "ftp"} {
		t.Run(proto, func(t *testing.T) {
			srv := transfertest.Start(t, proto)
			if err := os.WriteFile(filepath.Join(srv.Dir, "in.wav"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t, withLoopback)
			settings := srv.Settings(nil)
			secret, _ := settings["password"].(string)
			if proto == "s3" {
				secret, _ = settings["secret_key"].(string)
			}
			body := func(extra map[string]any) map[string]any {
				m := map[string]any{"type": srv.Type(), "display_name": "My " + proto}
				for k, v := range settings {
					m[k] = v
				}
				for k, v := range extra {
					m[k] = v
				}
				return m
			}

			// A refused login is a form error of the secret, and nothing
			// is stored.
			bad := "password"
			if proto == "s3" {
				bad = "secret_key"
			}
			r := e.wantErr(e.req("POST", "/api/services.json", e.keyA, body(map[string]any{bad: "wrong"})), 400, "validation_failed")
			if !strings.Contains(r.FormErrors[bad], "refused") {
				t.Errorf("wrong credentials: form_errors %v", r.FormErrors)
			}
			if l := e.must(e.req("GET", "/api/services.json", e.keyA, nil)).list(t); len(l) != 0 {
				t.Fatalf("a refused service was stored: %v", l)
			}

			svc := e.must(e.req("POST", "/api/services.json", e.keyA, body(nil))).obj(t)
			uuid, _ := svc["uuid"].(string)
			if svc["type"] != srv.Type() || svc["display_name"] != "My "+proto || svc["incoming"] != true || svc["outgoing"] != true || uuid == "" {
				t.Errorf("created %v", svc)
			}
			for _, k := range []string{"password", "secret_key", "username", "access_key", "private_key"} {
				if _, shown := svc[k]; shown {
					t.Errorf("the response shows %s", k)
				}
			}
			for _, path := range []string{"/api/services.json", "/api/service/" + uuid + ".json"} {
				if raw := e.must(e.req("GET", path, e.keyA, nil)).Raw; strings.Contains(string(raw), secret) || strings.Contains(string(raw), srv.User) {
					t.Errorf("GET %s shows credentials: %s", path, raw)
				}
			}
			if proto == "s3" && svc["bucket"] != srv.Bucket {
				t.Errorf("s3 public settings: %v", svc)
			}

			// Test and ls use the stored (sealed) credentials.
			test := e.must(e.req("POST", "/api/service/"+uuid+"/test.json", e.keyA, nil)).obj(t)
			if files, _ := test["files"].([]any); len(files) != 1 || files[0] != "in.wav" {
				t.Errorf("test: %v", test)
			}
			if l := e.must(e.req("GET", "/api/service/"+uuid+"/ls.json", e.keyA, nil)).list(t); len(l) != 1 || l[0] != "in.wav" {
				t.Errorf("ls: %v", l)
			}
			e.wantErr(e.req("POST", "/api/service/"+uuid+"/test.json", e.keyB, nil), 404, "not_found")
			e.wantErr(e.req("GET", "/api/service/"+uuid+".json", e.keyB, nil), 404, "not_found")

			// An update keeps what it does not send, credentials too, and
			// is tested again.
			upd := e.must(e.req("POST", "/api/service/"+uuid+".json", e.keyA, map[string]any{"display_name": "Renamed", "incoming": false})).obj(t)
			if upd["display_name"] != "Renamed" || upd["incoming"] != false || upd["outgoing"] != true {
				t.Errorf("updated %v", upd)
			}
			r = e.wantErr(e.req("POST", "/api/service/"+uuid+".json", e.keyA, map[string]any{bad: "wrong"}), 400, "validation_failed")
			if r.FormErrors[bad] == "" {
				t.Errorf("update with wrong credentials: %v", r.FormErrors)
			}
			e.must(e.req("POST", "/api/service/"+uuid+"/test.json", e.keyA, nil)) // the refused change was not stored
			r = e.wantErr(e.req("POST", "/api/service/"+uuid+".json", e.keyA, map[string]any{"type": "ftp", "uuid": "other"}), 400, "validation_failed")
			if (proto != "ftp" && r.FormErrors["type"] == "") || r.FormErrors["uuid"] == "" {
				t.Errorf("changing type and uuid: %v", r.FormErrors)
			}
			e.wantErr(e.req("POST", "/api/service/"+uuid+".json", e.keyB, map[string]any{"display_name": "x"}), 404, "not_found")

			if d := e.must(e.req("DELETE", "/api/service/"+uuid+".json", e.keyA, nil)).obj(t); d["uuid"] != uuid {
				t.Errorf("delete: %v", d)
			}
			e.wantErr(e.req("DELETE", "/api/service/"+uuid+".json", e.keyA, nil), 404, "not_found")
			e.wantErr(e.req("POST", "/api/service/"+uuid+"/test.json", e.keyA, nil), 404, "not_found")
		})
	}
}

// Bad requests name their fields; types the server cannot transfer with
// are refused with the reason.
func TestServiceRegistrationRefused(t *testing.T) {
	e := newEnv(t, withLoopback)
	for _, tc := range []struct {
		name  string
		body  any
		field string
		msg   string
	}{
		{"no type", map[string]any{"host": "h"}, "type", "required"},
		{"http", map[string]any{"type": "http"}, "type", "unknown service type"},
		{"hosted", map[string]any{"type": "youtube"}, "type", "video hosting platform"},
		{"unknown parameter", map[string]any{"type": "sftp", "host": "h", "username": "u", "password": "p", "colour": "red"}, "colour", "not a parameter"},
		{"ftp permissions", map[string]any{"type": "ftp", "host": "h", "permissions": "600"}, "permissions", "not applied over FTP"},
		{"missing host", map[string]any{"type": "sftp", "username": "u", "password": "p"}, "host", "required"},
		{"bad port", map[string]any{"type": "sftp", "host": "h", "username": "u", "password": "p", "port": "ssh"}, "port", "whole number"},
		{"no secret", map[string]any{"type": "sftp", "host": "h", "username": "u"}, "password", "private_key"},
		{"bad url", map[string]any{"type": "webdav", "url": "dav.example.org"}, "url", "http(s)"},
		{"bad bucket", map[string]any{"type": "s3", "bucket": "No_Bucket"}, "bucket", "bucket name"},
		{"bad acl", map[string]any{"type": "s3", "bucket": "b-1", "canned_acl": "everyone"}, "canned_acl", "private, public-read"},
		{"no direction", map[string]any{"type": "webdav", "url": "https://x/", "incoming": false, "outgoing": false}, "outgoing", "incoming, outgoing or both"},
		{"typed wrong", map[string]any{"type": "webdav", "url": "https://x/", "incoming": "sometimes"}, "incoming", "true or false"},
		{"uuid on create", map[string]any{"type": "webdav", "url": "https://x/", "uuid": "mine"}, "uuid", "assigned"},
		{"unreachable", map[string]any{"type": "sftp", "host": "127.0.0.1", "port": 1, "username": "u", "password": "p"}, "host", "could not connect"},
	} {
		r := e.wantErr(e.req("POST", "/api/services.json", e.keyA, tc.body), 400, "validation_failed")
		if !strings.Contains(r.FormErrors[tc.field], tc.msg) {
			t.Errorf("%s: form_errors %v, want %s: ...%s...", tc.name, r.FormErrors, tc.field, tc.msg)
		}
	}
	// Every bad field at once.
	r := e.wantErr(e.req("POST", "/api/services.json", e.keyA, map[string]any{"type": "ftp", "port": "x", "tls": "maybe"}), 400, "validation_failed")
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range r.FormErrors {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, []string{"host", "port", "tls"}) {
		t.Errorf("form_errors %v, want host, port and tls", r.FormErrors)
	}
	e.wantErr(e.req("POST", "/api/services.json", e.keyA, "[1]"), 400, "malformed_json")
	if l := e.must(e.req("GET", "/api/services.json", e.keyA, nil)).list(t); len(l) != 0 {
		t.Errorf("refused services were stored: %v", l)
	}
	// test: false stores without connecting; the type's display name and
	// the host name it.
	svc := e.must(e.req("POST", "/api/services.json", e.keyA, map[string]any{"type": "sftp", "host": "127.0.0.1", "port": "1",
		"username": "u", "password": "p", "test": false, "outgoing": "false"})).obj(t)
	if svc["display_name"] != "SFTP 127.0.0.1" || svc["port"] != 1.0 || svc["outgoing"] != false || svc["incoming"] != true {
		t.Errorf("untested service %v", svc)
	}
	r = e.wantErr(e.req("POST", "/api/service/"+svc["uuid"].(string)+"/test.json", e.keyA, nil), 502, "service_failed")
	if !strings.Contains(r.ErrorMsg, svc["uuid"].(string)) {
		t.Errorf("test of an unreachable service: %q", r.ErrorMsg)
	}
}

// By default (no Config.Transfer) the handler refuses loopback and
// private addresses for services; registration says so on the field.
func TestServiceRegistrationForbiddenAddress(t *testing.T) {
	srv := transfertest.Start(t, "webdav")
	e := newEnv(t)
	body := srv.Settings(nil)
	body["type"] = "webdav"
	r := e.wantErr(e.req("POST", "/api/services.json", e.keyA, body), 400, "validation_failed")
	if !strings.Contains(r.FormErrors["url"], "forbidden address") {
		t.Errorf("form_errors %v", r.FormErrors)
	}
}

// A store without a secret key refuses credentials with 503, and takes
// services without any.
func TestServiceWithoutSecretKey(t *testing.T) {
	e := newEnv(t)
	e.store.SetSecretKey(nil)
	e.wantErr(e.req("POST", "/api/services.json", e.keyA, map[string]any{"type": "webdav", "url": "https://dav.example.org/",
		"username": "u", "password": "p", "test": false}), 503, "credentials_unavailable")
	e.must(e.req("POST", "/api/services.json", e.keyA, map[string]any{"type": "webdav", "url": "https://dav.example.org/", "test": false}))
}

// Speech recognizers are registered like the other services; they hold no
// files, their settings are checked per type, their API key is a sealed
// credential, and a production's speech_recognition must name one.
func TestSpeechServiceRegistration(t *testing.T) {
	e := newEnv(t, withLoopback)
	for _, tc := range []struct {
		name  string
		body  any
		field string
		msg   string
	}{
		{"whisper without url", map[string]any{"type": "whisper"}, "base_url", "required"},
		{"whisper bad url", map[string]any{"type": "whisper", "base_url": "asr.lan"}, "base_url", "http"},
		{"openai without key", map[string]any{"type": "openai"}, "api_key", "required"},
		{"pocketsphinx model", map[string]any{"type": "pocketsphinx", "model": "/etc"}, "model", "operator"},
		{"pocketsphinx incoming", map[string]any{"type": "pocketsphinx", "incoming": true}, "incoming", "neither incoming nor outgoing"},
		{"unknown parameter", map[string]any{"type": "whisper", "base_url": "http://127.0.0.1:1/v1", "host": "x"}, "host", "not a parameter"},
		{"unreachable", map[string]any{"type": "whisper", "base_url": "http://127.0.0.1:1/v1"}, "base_url", "connection refused"},
	} {
		r := e.wantErr(e.req("POST", "/api/services.json", e.keyA, tc.body), 400, "validation_failed")
		if !strings.Contains(r.FormErrors[tc.field], tc.msg) {
			t.Errorf("%s: form_errors %v, want %s: ...%s...", tc.name, r.FormErrors, tc.field, tc.msg)
		}
	}
	svc := e.must(e.req("POST", "/api/services.json", e.keyA, map[string]any{"type": "whisper",
		"base_url": "http://127.0.0.1:1/v1", "api_key": "sk-secret", "test": false})).obj(t)
	if svc["incoming"] != false || svc["outgoing"] != false || svc["base_url"] != "http://127.0.0.1:1/v1" || svc["api_key"] != nil {
		t.Errorf("whisper service %v", svc)
	}
	stored, err := e.store.GetService(context.Background(), e.userA.ID, svc["uuid"].(string))
	if err != nil || !strings.Contains(string(stored.Config), "sk-secret") {
		t.Errorf("stored service %s, %v: the key is given back to the runner", stored.Config, err)
	}
	// A file service is not a recognizer.
	ftp := e.must(e.req("POST", "/api/services.json", e.keyA, map[string]any{"type": "ftp", "host": "127.0.0.1", "test": false})).obj(t)
	r := e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"speech_recognition": map[string]any{"uuid": ftp["uuid"]}}), 400, "validation_failed")
	if !strings.Contains(r.FormErrors["speech_recognition.uuid"], "not a speech recognition service") {
		t.Errorf("speech_recognition naming an FTP service: %v", r.FormErrors)
	}
	p := e.must(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"speech_recognition": map[string]any{"uuid": svc["uuid"]}})).obj(t)
	if get(p, "speech_recognition.type") != "whisper" || p["warning_message"] != "" {
		t.Errorf("production with speech recognition: %v", p)
	}
}
