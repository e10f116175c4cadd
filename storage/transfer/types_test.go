package transfer_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/storage/transfer/transfertest"
)

// The catalogue is what registration offers: every type connects, and
// every secret is a credential the stores seal.
func TestTypes(t *testing.T) {
	names := transfer.TypeNames()
	if !slices.IsSorted(names) || len(names) != 4 {
		t.Errorf("types %v", names)
	}
	for _, typ := range transfer.Types() {
		if !transfer.Supported(typ.Name) {
			t.Errorf("%s is listed but Open does not handle it", typ.Name)
		}
		seen := map[string]bool{}
		for _, p := range typ.Parameters {
			if seen[p.Name] {
				t.Errorf("%s.%s twice", typ.Name, p.Name)
			}
			seen[p.Name] = true
			if (p.Kind == "password") != (storage.IsCredentialKey(p.Name) && p.Name != "username" && p.Name != "access_key") {
				t.Errorf("%s.%s: kind %s, but credential key %v", typ.Name, p.Name, p.Kind, storage.IsCredentialKey(p.Name))
			}
			if p.Kind == "select" && len(p.Options) == 0 {
				t.Errorf("%s.%s: a select without options", typ.Name, p.Name)
			}
		}
		for _, pub := range typ.Publish {
			if !slices.Contains([]string{"downloadable", "sharing", "privacy"}, pub) {
				t.Errorf("%s publishes %s", typ.Name, pub)
			}
		}
	}
}

func TestCheckSettings(t *testing.T) {
	got, err := transfer.CheckSettings("sftp", map[string]any{"host": " files.example.org ", "port": "2222", "username": "ann",
		"password": " spaced ", "path": "", "base_url": nil, "permissions": 640.0})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"host": "files.example.org", "port": 2222, "username": "ann", "password": " spaced ", "permissions": "640"}
	if b, w := mustJSON(got), mustJSON(want); b != w {
		t.Errorf("normalized %s, want %s", b, w)
	}
	if got, err := transfer.CheckSettings("ftp", map[string]any{"host": "h", "tls": "off"}); err != nil || got["tls"] != false {
		t.Errorf("ftp tls off: %v, %v", got, err)
	}
	if got, err := transfer.CheckSettings("s3", map[string]any{"bucket": "b-1", "downloadable": true, "canned_acl": "public-read"}); err != nil || got["downloadable"] != true {
		t.Errorf("s3: %v, %v", got, err)
	}

	for _, tc := range []struct {
		typ      string
		settings map[string]any
		field    string // "" for an unsupported type
		msg      string
	}{
		{"http", nil, "", "unknown service type"},
		{"soundcloud", nil, "", "audio hosting platform"},
		{"ftp", map[string]any{}, "host", "required"},
		{"ftp", map[string]any{"host": "h", "permissions": "600"}, "permissions", "not applied over FTP"},
		{"ftp", map[string]any{"host": "h", "colour": "red"}, "colour", "not a parameter of ftp"},
		{"ftp", map[string]any{"host": "h", "port": "x"}, "port", "whole number"},
		{"ftp", map[string]any{"host": "h", "port": 70000}, "port", "not a port"},
		{"ftp", map[string]any{"host": "h", "tls": "maybe"}, "tls", "true or false"},
		{"ftp", map[string]any{"host": "h", "base_url": "files"}, "base_url", "http(s)"},
		{"ftp", map[string]any{"host": "h\nx"}, "host", "one line"},
		{"ftp", map[string]any{"host": []any{"h"}}, "host", "text value"},
		{"sftp", map[string]any{"host": "h", "username": "u"}, "password", "private_key"},
		{"sftp", map[string]any{"host": "h", "username": "u", "private_key": "nope"}, "private_key", "private key"},
		{"sftp", map[string]any{"host": "h", "username": "u", "password": "p", "host_key": "abc"}, "host_key", "SHA256"},
		{"webdav", map[string]any{"url": "ftp://x/"}, "url", "WebDAV"},
		{"s3", map[string]any{"bucket": "UP"}, "bucket", "bucket name"},
		{"s3", map[string]any{"bucket": "b-1", "canned_acl": "world"}, "canned_acl", "one of private, public-read"},
		{"s3", map[string]any{"bucket": "b-1", "access_key": "a"}, "secret_key", "together"},
	} {
		_, err := transfer.CheckSettings(tc.typ, tc.settings)
		if tc.field == "" {
			if !errors.Is(err, transfer.ErrUnsupportedType) || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "ftp, s3, sftp, webdav") {
				t.Errorf("%s: %v", tc.typ, err)
			}
			continue
		}
		var se *transfer.SettingsError
		if !errors.As(err, &se) || !errors.Is(err, transfer.ErrConfig) || !strings.Contains(se.Fields[tc.field], tc.msg) {
			t.Errorf("%s %v: %v, want %s: ...%s...", tc.typ, tc.settings, err, tc.field, tc.msg)
		}
	}
	// Every bad field at once.
	_, err = transfer.CheckSettings("ftp", map[string]any{"port": "x", "colour": 1})
	var se *transfer.SettingsError
	if !errors.As(err, &se) || len(se.Fields) != 3 {
		t.Errorf("all at once: %v", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestForPublish(t *testing.T) {
	yes, no := true, false
	sftp := storage.Service{Type: "sftp", Config: []byte(`{"host":"h","permissions":"664"}`)}
	for _, tc := range []struct {
		svc     storage.Service
		p       transfer.Publish
		key     string
		want    any
		ignored []string
	}{
		{sftp, transfer.Publish{Sharing: "private"}, "permissions", "600", nil},
		{sftp, transfer.Publish{Privacy: "public"}, "permissions", "664", nil},
		{storage.Service{Type: "sftp", Config: []byte(`{"host":"h","permissions":"600"}`)}, transfer.Publish{Sharing: "public"}, "permissions", "644", nil},
		{sftp, transfer.Publish{TrackType: "podcast", Downloadable: &yes}, "permissions", "664", []string{"track_type", "downloadable"}},
		{storage.Service{Type: "s3", Config: []byte(`{"bucket":"b"}`)}, transfer.Publish{Sharing: "public", Downloadable: &yes}, "canned_acl", "public-read", nil},
		{storage.Service{Type: "s3", Config: []byte(`{"bucket":"b","canned_acl":"public-read","downloadable":true}`)}, transfer.Publish{Privacy: "private", Downloadable: &no}, "downloadable", false, nil},
		{storage.Service{Type: "webdav", Config: []byte(`{"url":"http://x/"}`)}, transfer.Publish{Sharing: "private", Category: "10", Show: "s"}, "url", "http://x/", []string{"category", "show", "sharing"}},
		{storage.Service{Type: "ftp", Config: []byte(`{"host":"h"}`)}, transfer.Publish{Privacy: "private"}, "host", "h", []string{"privacy"}},
	} {
		got, ignored, err := transfer.ForPublish(tc.svc, tc.p)
		if err != nil {
			t.Errorf("%s %+v: %v", tc.svc.Type, tc.p, err)
			continue
		}
		var m map[string]any
		json.Unmarshal(got.Config, &m)
		if m[tc.key] != tc.want || !slices.Equal(ignored, tc.ignored) {
			t.Errorf("%s %+v: %s = %v (want %v), ignored %v (want %v)", tc.svc.Type, tc.p, tc.key, m[tc.key], tc.want, ignored, tc.ignored)
		}
	}
	if _, _, err := transfer.ForPublish(sftp, transfer.Publish{Sharing: "public", Privacy: "private"}); !errors.Is(err, transfer.ErrConfig) {
		t.Errorf("disagreeing sharing and privacy: %v", err)
	}
}

// Published with downloadable, S3 objects carry Content-Disposition:
// attachment with their name.
func TestPublishOnServers(t *testing.T) {
	ctx := context.Background()
	yes := true
	t.Run("s3", func(t *testing.T) {
		srv := transfertest.Start(t, "s3")
		svc, _, err := transfer.ForPublish(srv.Service("u", nil), transfer.Publish{Downloadable: &yes, Sharing: "public"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := transfer.Open(ctx, svc, transfer.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Put(ctx, "Ep 1 ä.mp3", strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
		oi, err := srv.S3.Client().StatObject(ctx, srv.Bucket, "Ep 1 ä.mp3", minio.StatObjectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cd := oi.Metadata.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, "Ep%201%20%C3%A4.mp3") {
			t.Errorf("Content-Disposition %q", cd)
		}
		if u := c.URL("a.mp3"); !strings.HasSuffix(u, "/"+srv.Bucket+"/a.mp3") {
			t.Errorf("public URL %q", u)
		}
	})
	// (sftp: Put sets the mode with SETSTAT, but rclone's server, the
	// one the tests run, ignores modes; TestForPublish checks the
	// permissions asked for.)
}
