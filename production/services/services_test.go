package services_test

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production/services"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/whisperhttp"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
)

func TestCatalogue(t *testing.T) {
	for _, name := range []string{"ftp", "sftp", "webdav", "s3", "pocketsphinx", "whisper", "openai"} {
		if _, ok := services.Lookup(name); !ok {
			t.Errorf("%s is not in the catalogue", name)
		}
	}
	if services.IsSpeech("sftp") || !services.IsSpeech("whisper") {
		t.Error("IsSpeech is wrong")
	}
	err := services.UnsupportedTypeError("youtube")
	if !errors.Is(err, transfer.ErrUnsupportedType) || !strings.Contains(err.Error(), "pocketsphinx") {
		t.Errorf("unsupported type: %v", err)
	}
}

func TestCheckSpeechSettings(t *testing.T) {
	for _, tc := range []struct {
		typ      string
		settings map[string]any
		field    string // "" for valid
	}{
		{"pocketsphinx", nil, ""},
		{"pocketsphinx", map[string]any{"model": "/usr/share"}, "model"},
		{"whisper", map[string]any{"base_url": "http://asr.lan:8000/v1", "model": " base.en "}, ""},
		{"whisper", nil, "base_url"},
		{"whisper", map[string]any{"base_url": "ftp://asr.lan"}, "base_url"},
		{"whisper", map[string]any{"base_url": "http://asr.lan", "api_key": 5}, "api_key"},
		{"openai", map[string]any{"api_key": "sk-1"}, ""},
		{"openai", map[string]any{}, "api_key"},
	} {
		out, err := services.CheckSettings(tc.typ, tc.settings)
		var se *transfer.SettingsError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s %v: %v", tc.typ, tc.settings, err)
		case tc.field != "" && (!errors.As(err, &se) || se.Fields[tc.field] == ""):
			t.Errorf("%s %v: %v, want an error on %s", tc.typ, tc.settings, err, tc.field)
		case tc.field == "" && tc.settings["model"] != nil && out["model"] != "base.en":
			t.Errorf("settings not trimmed: %v", out)
		}
	}
}

// A speech service's test reaches its server through the caller's
// dialer (the address policy), and finds PocketSphinx when installed.
func TestSpeechServiceTest(t *testing.T) {
	refused := errors.New("forbidden address")
	opt := transfer.Options{Dial: func(context.Context, string, string) (net.Conn, error) { return nil, refused }}
	svc := storage.Service{Type: "whisper", Config: []byte(`{"base_url":"http://10.0.0.1:8000/v1"}`)}
	if _, err := services.Test(context.Background(), svc, opt); !errors.Is(err, speech.ErrUnavailable) || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("test through a refusing dialer: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	svc.Config = []byte(`{"base_url":"http://` + ln.Addr().String() + `/v1"}`)
	if _, err := services.Test(context.Background(), svc, transfer.Options{}); err != nil {
		t.Errorf("test of a listening server: %v", err)
	}
	rec, err := services.Recognizer(svc, opt)
	if _, ok := rec.(*whisperhttp.Client); !ok || err != nil {
		t.Errorf("recognizer %T, %v", rec, err)
	}
	if _, err := services.Recognizer(storage.Service{Type: "sftp"}, opt); !errors.Is(err, transfer.ErrUnsupportedType) {
		t.Errorf("recognizer of an SFTP service: %v", err)
	}
	_, err = services.Test(context.Background(), storage.Service{Type: "pocketsphinx"}, opt)
	if _, lookErr := exec.LookPath("pocketsphinx_continuous"); (lookErr == nil) != (err == nil) {
		t.Errorf("pocketsphinx test: %v (program lookup: %v)", err, lookErr)
	}
}
