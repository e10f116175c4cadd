package production

import "testing"

func TestOutputFilename(t *testing.T) {
	cases := []struct {
		name     string
		o        OutputFile
		basename string
		input    string
		want     string
	}{
		{"default basename and ending", OutputFile{Format: "mp3"}, "", "https://example.org/media/ep%2012.final.wav?token=1", "ep 12.final.mp3"},
		{"basename", OutputFile{Format: "aac"}, "show-42", "in.wav", "show-42.m4a"},
		{"suffix and ending", OutputFile{Format: "aac", Suffix: "_hq", Ending: ".M4B"}, "show", "in.wav", "show_hq.m4b"},
		{"filename wins", OutputFile{Format: "flac", Filename: "master.flac", Suffix: "x", Ending: "flac"}, "show", "in.wav", "master.flac"},
		{"multi-part ending", OutputFile{Format: "chaps"}, "ep", "", "ep.chapters.txt"},
		{"tracks default", OutputFile{Format: "tracks"}, "ep", "", "ep.flac.zip"},
		{"no input", OutputFile{Format: "opus"}, "", "", "output.opus"},
		{"input keeps ending", OutputFile{Format: "input"}, "", "rec/take1.aiff", "take1.aiff"},
		{"video default", OutputFile{Format: "video"}, "", "clip.mov", "clip.mp4"},
		{"service file name", OutputFile{Format: "mp3"}, "", `folder\sub\raw take.WAV`, "raw take.mp3"},
		{"sanitized suffix", OutputFile{Format: "mp3", Suffix: "/../x"}, "a", "", "a__._x.mp3"},
		{"sanitized filename", OutputFile{Format: "mp3", Filename: "../../etc/passwd.mp3"}, "", "", "_.__._etc_passwd.mp3"},
	}
	for _, c := range cases {
		if got := OutputFilename(c.o, c.basename, c.input); got != c.want {
			t.Errorf("%s: OutputFilename = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"ok name.mp3":  "ok name.mp3",
		"../x":         "_._x",
		"a/b\\c":       "a_b_c",
		".hidden":      "hidden",
		"a..b":         "a_.b",
		"...":          "__.",
		"  x\x00y  ":   "x_y",
		"bad\xffutf8":  "bad_utf8",
		"colon:star*?": "colon_star__",
		"":             "",
	} {
		if got := SanitizeName(in); got != want {
			t.Errorf("SanitizeName(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"../../x", "a/../../b", "....//", "..\\..\\"} {
		got := SanitizeName(in)
		if nameProblem(got) != "" {
			t.Errorf("SanitizeName(%q) = %q is still unsafe: %s", in, got, nameProblem(got))
		}
	}
}
