package main

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage/transfer/transfertest"
)

// End to end through serve: a user registers an SFTP and a WebDAV
// service through the API (real servers), produces with
// outgoing_services and finds the files there. The WAV goes to every
// service by default; the MP3 names the WebDAV service only.
func TestServeOutgoingServices(t *testing.T) {
	sftpSrv := transfertest.Start(t, "sftp")
	davSrv := transfertest.Start(t, "webdav")
	s := startServe(t, "-allow-private-fetch", "-admin-user", "admin", "-admin-password", "correct horse battery")
	c := &apiClient{t: t, base: s.base, hc: http.DefaultClient, basic: [2]string{"admin", "correct horse battery"}}

	register := func(srv *transfertest.Server, extra map[string]any) string {
		body := srv.Settings(extra)
		body["type"] = srv.Type()
		svc := c.call("POST", "/api/services.json", body)
		uuid, _ := svc["uuid"].(string)
		if uuid == "" || svc["password"] != nil || svc["username"] != nil {
			t.Fatalf("registered %v", svc)
		}
		return uuid
	}
	sftpUUID := register(sftpSrv, map[string]any{"base_url": "https://cdn.example.org/pod/", "path": "/"})
	davUUID := register(davSrv, nil)
	// A wrong password is refused at registration.
	body := davSrv.Settings(map[string]any{"password": "wrong"})
	body["type"] = "webdav"
	b, _ := json.Marshal(body)
	if code, raw := c.do("POST", "/api/services.json", "application/json", bytes.NewReader(b)); code != 400 || !strings.Contains(string(raw), `"password"`) {
		t.Errorf("wrong password: HTTP %d %s", code, raw)
	}

	prod := c.call("POST", "/api/productions.json", map[string]any{
		"metadata": map[string]any{"title": "Episode"}, "output_basename": "episode",
		"outgoing_services": []any{map[string]any{"uuid": sftpUUID, "sharing": "public"}, map[string]any{"uuid": davUUID}},
		"output_files": []any{map[string]any{"format": "wav"},
			map[string]any{"format": "mp3", "bitrate": 64, "outgoing_services": []any{davUUID}}},
	})
	uuid, _ := prod["uuid"].(string)
	var up bytes.Buffer
	mw := multipart.NewWriter(&up)
	fw, _ := mw.CreateFormFile("input_file", "in.wav")
	fw.Write(serveWAV(t, 2))
	mw.Close()
	code, raw := c.do("POST", "/api/production/"+uuid+"/upload.json", mw.FormDataContentType(), &up)
	c.envelope("upload", code, raw)
	c.call("POST", "/api/production/"+uuid+"/start.json", nil)
	deadline := time.Now().Add(90 * time.Second)
	var p map[string]any
	for {
		p = c.call("GET", "/api/production/"+uuid+".json", nil)
		if st, _ := p["status"].(float64); st == 3 || st == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("production did not finish: %v", p["status_string"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p["status"] != 3.0 {
		t.Fatalf("status %v: %v", p["status_string"], p["error_message"])
	}

	files := func(dir string) []string {
		ents, _ := os.ReadDir(dir)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	if got := files(sftpSrv.Dir); !slices.Equal(got, []string{"episode.wav"}) {
		t.Errorf("sftp server has %q, want the wav only", got)
	}
	if got := files(davSrv.Dir); !slices.Equal(got, []string{"episode.mp3", "episode.wav"}) {
		t.Errorf("webdav server has %q, want the mp3 and the wav", got)
	}
	// The copies are the outputs.
	outs, _ := p["output_files"].([]any)
	for _, o := range outs {
		om := o.(map[string]any)
		name := filepath.Base(strings.Split(om["download_url"].(string), "?")[0])
		code, want := c.do("GET", om["download_url"].(string), "", nil)
		got, err := os.ReadFile(filepath.Join(davSrv.Dir, name))
		if code != 200 || err != nil || !bytes.Equal(got, want) || len(got) == 0 {
			t.Errorf("%s on the webdav server: %v, %d bytes, download %d bytes (HTTP %d)", name, err, len(got), len(want), code)
		}
	}
	svcs, _ := p["outgoing_services"].([]any)
	if len(svcs) != 2 {
		t.Fatalf("outgoing_services %v", p["outgoing_services"])
	}
	for i, want := range [][]string{{"https://cdn.example.org/pod/episode.wav"}, {"http://" + davSrv.Addr + "/episode.wav", "http://" + davSrv.Addr + "/episode.mp3"}} {
		o := svcs[i].(map[string]any)
		var urls []string
		for _, u := range o["result_urls"].([]any) {
			urls = append(urls, u.(string))
		}
		slices.Sort(urls)
		slices.Sort(want)
		if o["transfer_success"] != true || o["error_message"] != "" || !slices.Equal(urls, want) {
			t.Errorf("outgoing service %d: %v", i, o)
		}
	}
	if w, _ := p["warning_message"].(string); w != "" {
		t.Errorf("warning %q", w)
	}
	if db := dataFiles(t, s.dir); bytes.Contains(db, []byte(sftpSrv.Password)) {
		t.Error("a service password is in the database in clear text")
	}
}
