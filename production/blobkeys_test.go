package production_test

import (
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

func TestBlobKeys(t *testing.T) {
	const id = "0b6c3c8e-2f4a-4a57-9d1e-3f1f3d1f1a2b"
	for _, c := range []struct{ got, want string }{
		{production.InputKey(id, "ep 1.wav"), "productions/" + id + "/input/ep 1.wav"},
		{production.IntroKey(id, "host", "a.flac"), "productions/" + id + "/intro/host/a.flac"},
		{production.OutputKey(id, "ep.mp3"), "productions/" + id + "/output/ep.mp3"},
		{production.ImageKey(id, "cover.jpg"), "productions/" + id + "/image/cover.jpg"},
		{production.ThumbnailKey(id, "cover.jpg"), "productions/" + id + "/image/thumb-cover.jpg.png"},
		{production.PresetImageKey(id, "c.png"), "presets/" + id + "/image/c.png"},
		{production.PresetThumbnailKey(id, "c.png"), "presets/" + id + "/image/thumb-c.png.png"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestBlobKeysHostileNames(t *testing.T) {
	const id = "u1"
	for _, name := range []string{"", ".", "..", "../../etc/passwd", "a/b", `a\b`, ".tmp-x", "c:x", "a\x00b", "\u00e9t\u00e9.wav", strings.Repeat("x", 600)} {
		for _, key := range []string{
			production.InputKey(id, name), production.IntroKey(id, name, name), production.OutputKey(id, name),
			production.ImageKey(id, name), production.ThumbnailKey(id, name), production.PresetImageKey(name, name),
			production.InputKey(name, "f"),
		} {
			if err := storage.ValidKey(key); err != nil {
				t.Errorf("name %q: key %q: %v", name, key, err)
			}
		}
		if k := production.InputKey(id, name); !strings.HasPrefix(k, production.InputPrefix(id)) || strings.Count(k, "/") != 3 {
			t.Errorf("name %q escaped its folder: %q", name, k)
		}
	}
}
