package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/storage"
)

// The spec's default routing: file storage gets every file, audio
// hosting the lossy file with the highest bitrate, video hosting the
// video, podcast hosting the best MP3; an output that names services goes
// to those only.
func TestRouteFiles(t *testing.T) {
	outputs := []production.OutputFile{
		{Format: "mp3", Bitrate: 64},
		{Format: "aac"}, // default 64 kbps: the first 64 wins
		{Format: "mp3", Bitrate: 128},
		{Format: "opus", Bitrate: 160, OutgoingServices: []string{"named"}},
		{Format: "flac"},
		{Format: "video"},
		{Format: "vorbis", Bitrate: 112},
	}
	var files []engine.WrittenFile
	for i := range outputs {
		files = append(files, engine.WrittenFile{Name: "f" + string(rune('0'+i)), Output: i})
	}
	files = append(files, engine.WrittenFile{Name: "f2-part2", Output: 2}) // split part of the 128 kbps mp3
	names := func(svc storage.Service) string {
		got, err := routeFiles(outputs, files, svc)
		if err != nil {
			return "error: " + err.Error()
		}
		var n []string
		for _, f := range got {
			n = append(n, f.Name)
		}
		return strings.Join(n, " ")
	}
	for _, tc := range []struct {
		typ, uuid, want string
	}{
		{"sftp", "x", "f0 f1 f2 f4 f5 f6 f2-part2"},
		{"s3", "named", "f0 f1 f2 f3 f4 f5 f6 f2-part2"},
		{"soundcloud", "x", "f2 f2-part2"},
		{"youtube", "x", "f5"},
		{"libsyn", "x", "f2 f2-part2"},
		{"gopher", "x", ""},
		{"gopher", "named", "f3"},
	} {
		if got := names(storage.Service{Type: tc.typ, UUID: tc.uuid}); got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.typ, tc.uuid, got, tc.want)
		}
	}
	// Without an output of its kind, a hosting service gets an error
	// that says what to add.
	flacOnly := []production.OutputFile{{Format: "flac"}}
	one := []engine.WrittenFile{{Name: "a.flac", Output: 0}}
	for typ, want := range map[string]string{"libsyn": "mp3", "youtube": "video", "soundcloud": "lossy"} {
		if _, err := routeFiles(flacOnly, one, storage.Service{Type: typ}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s without its output: %v", typ, err)
		}
	}
	if got, err := routeFiles(flacOnly, one, storage.Service{Type: "webdav"}); err != nil || !slices.Equal(got, one) {
		t.Errorf("webdav: %v, %v", got, err)
	}
}
