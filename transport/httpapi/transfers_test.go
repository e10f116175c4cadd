package httpapi_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/storage/transfer/transfertest"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// Service ls and inputs named on a service, against a real WebDAV and a
// real SFTP server on loopback (which the test's handler may reach).
func TestServiceLsAndInput(t *testing.T) {
	for _, proto := range []string{"webdav", "sftp"} {
		t.Run(proto, func(t *testing.T) {
			srv := transfertest.Start(t, proto)
			wav := makeWAV(t, 2, 44100, 1.5, audio.Tags{Title: "From the server"})
			for name, data := range map[string][]byte{"show.wav": wav, "Ep: 1?.wav": wav, "b.MP3": []byte("not really"), "notes.txt": []byte("x"), "cover.jpg": {1}} {
				if err := os.WriteFile(filepath.Join(srv.Dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			os.Mkdir(filepath.Join(srv.Dir, "older.wav"), 0o755) // a directory, not a file

			e := newEnv(t, func(c *httpapi.Config) { c.Transfer = &transfer.Options{} })
			ctx := context.Background()
			svc := srv.Service(e.userA.ID, nil)
			if err := e.store.CreateService(ctx, &svc); err != nil {
				t.Fatal(err)
			}
			l := e.must(e.req("GET", "/api/service/"+svc.UUID+"/ls.json", e.keyA, nil)).list(t)
			var got []string
			for _, v := range l {
				got = append(got, v.(string))
			}
			if !slices.Equal(got, []string{"Ep: 1?.wav", "b.MP3", "show.wav"}) {
				t.Errorf("ls = %q, want the audio files only, sorted", got)
			}
			e.wantErr(e.req("GET", "/api/service/"+svc.UUID+"/ls.json", e.keyB, nil), 404, "not_found")

			// An input named on the service is copied and probed when saved.
			p := e.must(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"service": svc.UUID, "input_file": "show.wav"})).obj(t)
			if p["service"] != svc.UUID || p["input_file"] != "show.wav" || p["channels"] != 2.0 || p["samplerate"] != 44100.0 ||
				get(p, "metadata.title") != "From the server" || p["start_allowed"] != true {
				t.Errorf("production from a service input: %v", p)
			}
			// Names the API would not choose for its own files are fine on
			// a service.
			q := e.must(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"service": svc.UUID, "input_file": "Ep: 1?.wav"})).obj(t)
			if q["input_file"] != "Ep: 1?.wav" || q["channels"] != 2.0 {
				t.Errorf("odd name from a service: %v", q)
			}

			// So is an outro named on the service.
			p = e.must(e.req("POST", "/api/production/"+p["uuid"].(string)+"/multi_input_files.json", e.keyA,
				[]any{map[string]any{"type": "outro", "id": "o1", "service": svc.UUID, "input_file": "show.wav"}})).obj(t)
			if get(p, "multi_input_files.0.input_file") != "show.wav" || get(p, "multi_input_files.0.input_samplerate") != 44100.0 ||
				get(p, "multi_input_files.0.service") != svc.UUID {
				t.Errorf("outro from the service: %v", p["multi_input_files"])
			}
			r := e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"service": svc.UUID, "input_file": "missing.wav"}), 400, "validation_failed")
			if !strings.Contains(r.FormErrors["input_file"], "missing.wav") {
				t.Errorf("missing file: form_errors %v", r.FormErrors)
			}
			r = e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"service": svc.UUID, "input_file": "notes.txt"}), 400, "validation_failed")
			if r.FormErrors["input_file"] == "" {
				t.Errorf("not audio: form_errors %v", r.FormErrors)
			}
			e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"service": svc.UUID, "input_file": "../etc/passwd"}), 400, "validation_failed")

			// A wrong password is the service's refusal.
			bad := srv.Service(e.userA.ID, map[string]any{"password": "wrong"})
			if err := e.store.CreateService(ctx, &bad); err != nil {
				t.Fatal(err)
			}
			r = e.wantErr(e.req("GET", "/api/service/"+bad.UUID+"/ls.json", e.keyA, nil), 502, "service_failed")
			if !strings.Contains(r.ErrorMsg, "refused") {
				t.Errorf("wrong password: %q", r.ErrorMsg)
			}
		})
	}
}

// By default the handler refuses to reach loopback and private
// addresses for services, as it does for input URLs.
func TestServiceLsRefusesLoopbackByDefault(t *testing.T) {
	srv := transfertest.Start(t, "webdav")
	e := newEnv(t)
	svc := srv.Service(e.userA.ID, nil)
	if err := e.store.CreateService(context.Background(), &svc); err != nil {
		t.Fatal(err)
	}
	r := e.wantErr(e.req("GET", "/api/service/"+svc.UUID+"/ls.json", e.keyA, nil), 502, "service_failed")
	if !strings.Contains(r.ErrorMsg, "forbidden") {
		t.Errorf("message %q", r.ErrorMsg)
	}
}
