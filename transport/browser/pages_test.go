package browser_test

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/audiopost/audiopost/internal/browsertest"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// TestMeasurePage drops recordings of each format on the measure page
// and saves its figures: they are `audiopost measure -json`'s to the
// hundredth, and nothing was uploaded. Tab reaches the file control
// and the save button, which Enter presses. The EBU's test files join in
// when ../shared has them.
func TestMeasurePage(t *testing.T) {
	skipShort(t)
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	wav := filepath.Join(dir, "speech.wav")
	testaudio.WriteWAV(t, wav, testaudio.SpeechLike(44100, 9, 0.25), 44100)
	files := []string{wav}
	for _, f := range []struct{ name, codec string }{{"speech.flac", "flac"}, {"speech.mp3", "libmp3lame"}} {
		p := filepath.Join(dir, f.name)
		if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", wav, "-c:a", f.codec, "-y", p).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v\n%s", err, out)
		}
		files = append(files, p)
	}
	silent := filepath.Join(dir, "silence.wav")
	testaudio.WriteWAV(t, silent, [][]float64{make([]float64, 44100)}, 44100)
	files = append(files, silent)
	// Chromium takes absolute paths only.
	for _, name := range []string{"seq-3341-1-16bit.wav", "seq-3341-2-16bit.wav", "seq-3341-15-24bit.wav", "seq-3341-23-24bit.wav"} {
		if p, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "testdata", "ebu-loudness", name)); fileExists(p) {
			files = append(files, p)
		}
	}
	junk := filepath.Join(dir, "notes.wav")
	os.WriteFile(junk, []byte("these are notes, not audio"), 0o644)

	base := serve(t)
	proxy := browsertest.NewProxy(t)
	ctx := browsertest.Tab(t, 5*time.Minute, proxy)
	downloads := filepath.Join(dir, "downloads")
	browsertest.AllowDownloads(t, ctx, downloads)
	do(t, ctx, "open the measure page", chromedp.Navigate(base+"/browser/measure.html"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.SetUploadFiles(chromedp.ID("files"), append(files, junk)))
	do(t, ctx, "wait for the figures", chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent.startsWith("Measured")`,
		chromedp.WithPollingTimeout(4*time.Minute), chromedp.WithPollingInterval(200*time.Millisecond)))
	text := run(t, ctx, "table", chromedp.Text(chromedp.ID("results")))
	if !strings.Contains(text, "notes.wav") || !strings.Contains(text, "not measured: notes.wav: not a WAV, FLAC or MP3 recording") {
		t.Errorf("the table does not say that notes.wav is no recording:\n%s", text)
	}
	if !strings.Contains(text, "like radio and television in Europe") {
		t.Errorf("no plain words beside the EBU's -23 LUFS files:\n%s", text)
	}
	// The keyboard alone reaches the recordings' control and the save
	// button, which Enter presses.
	do(t, ctx, "focus the top", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	var stops []string
	for range 20 {
		do(t, ctx, "tab", chromedp.KeyEvent(kb.Tab))
		stop := run(t, ctx, "focus", chromedp.Evaluate[string](`(e => e.id || e.textContent.trim().slice(0, 30))(document.activeElement)`))
		if stop == "save" {
			break
		}
		stops = append(stops, stop)
	}
	if !contains(stops, "files") {
		t.Errorf("Tab never reaches the recordings' control; it stops at %q", stops)
	}
	do(t, ctx, "save with Enter", chromedp.KeyEvent(kb.Enter))
	csvPath := filepath.Join(downloads, "loudness.csv")
	waitFile(t, csvPath)
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(files)+1 {
		t.Fatalf("%d rows for %d recordings:\n%v", len(rows)-1, len(files), rows)
	}
	cols := rows[0]
	byFile := map[string][]string{}
	for _, r := range rows[1:] {
		byFile[r[0]] = r
	}
	out, err := exec.Command(nativeBinary(t), append([]string{"measure", "-json"}, files...)...).Output()
	if err != nil {
		t.Fatalf("audiopost measure: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(m["file"].(string))
		row := byFile[name]
		if row == nil {
			t.Errorf("%s is not among the page's figures", name)
			continue
		}
		for i, c := range cols[1 : len(cols)-1] {
			want, page := m[c], row[i+1]
			if want == nil {
				if page != "" {
					t.Errorf("%s %s: %s on the page, undefined by the binary", name, c, page)
				}
				continue
			}
			got, err := strconv.ParseFloat(page, 64)
			if err != nil || math.Abs(got-want.(float64)) > 0.0051 {
				t.Errorf("%s %s: %q on the page, %v by the binary", name, c, page, want)
			}
		}
	}
	checkNoUpload(t, proxy, base, wav)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func waitFile(t testing.TB, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !fileExists(path) {
		if time.Now().After(deadline) {
			t.Fatalf("%s was not downloaded", filepath.Base(path))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestProcessPageKeyboard uses the process page with the keyboard alone
// (the system's file dialog aside): every control has a label and is
// reached with Tab, a preset is chosen with the arrow keys, Enter on the
// button with no recording says so and moves to the file control, and
// with one processes it and moves to the result, whose download is the
// next stop of Tab. Beside every figure and loudness choice stand plain
// words.
func TestProcessPageKeyboard(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "talk.wav")
	testaudio.WriteWAV(t, in, testaudio.SpeechLike(44100, 12, 0.2), 44100)
	base := serve(t)
	ctx := browsertest.Tab(t, 4*time.Minute, nil)
	do(t, ctx, "open the process page", chromedp.Navigate(base+"/browser/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))

	unlabelled := run(t, ctx, "labels", chromedp.Evaluate[[]string](`[...document.querySelectorAll("input, select, button, summary, a")]
		.filter(el => !(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby") && !el.textContent.trim())
		.map(el => el.outerHTML.slice(0, 80))`))
	if len(unlabelled) > 0 {
		t.Errorf("controls without a label: %q", unlabelled)
	}

	// Tab from the top through the page: the stops, by id or text.
	do(t, ctx, "focus the top", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	var stops []string
	for range 40 {
		do(t, ctx, "tab", chromedp.KeyEvent(kb.Tab))
		stop := run(t, ctx, "focus", chromedp.Evaluate[string](`(e => e.id || e.textContent.trim().slice(0, 30))(document.activeElement)`))
		if len(stops) > 0 && stop == stops[0] {
			break
		}
		stops = append(stops, stop)
	}
	for _, want := range []string{"Measure loudness", "file", "preset", "loudnesstarget", "maxpeak", "alg-hipfilter", "alg-leveler",
		"alg-denoise", "alg-cutter", "All settings", "format", "start"} {
		if !contains(stops, want) {
			t.Errorf("Tab never reaches %q; it stops at %q", want, stops)
		}
	}

	// Arrow keys choose a preset, and its settings show.
	do(t, ctx, "choose a preset", chromedp.Focus(chromedp.ID("preset")), chromedp.KeyEvent(kb.ArrowDown))
	preset := run(t, ctx, "preset", chromedp.Evaluate[string](`document.getElementById("preset").selectedOptions[0].textContent`))
	target := run(t, ctx, "target", chromedp.Evaluate[string](`document.getElementById("loudnesstarget").selectedOptions[0].textContent`))
	if preset != "Broadcast (EBU R128)" || !strings.Contains(target, "-23 LUFS (radio and TV in Europe") {
		t.Errorf("after the down arrow: preset %q, target %q", preset, target)
	}
	options := run(t, ctx, "options", chromedp.Evaluate[[]string](`[...document.getElementById("loudnesstarget").options].map(o => o.textContent)`))
	for _, o := range options[1:] {
		if !strings.Contains(o, "(") {
			t.Errorf("loudness target %q has no words beside it", o)
		}
	}

	do(t, ctx, "Enter without a recording", chromedp.Focus(chromedp.ID("start")), chromedp.KeyEvent(kb.Enter))
	if got := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.id + ": " + document.getElementById("file-error").textContent`)); got != "file: Choose a recording first." {
		t.Errorf("after Enter without a recording: %q", got)
	}
	do(t, ctx, "choose the recording", chromedp.SetUploadFiles(chromedp.ID("file"), []string{in}),
		chromedp.Focus(chromedp.ID("start")), chromedp.KeyEvent(kb.Enter))
	do(t, ctx, "wait for the result", chromedp.Poll[chromedp.Void](`!document.getElementById("result").hidden || !document.getElementById("errors").hidden`,
		chromedp.WithPollingTimeout(3*time.Minute), chromedp.WithPollingInterval(200*time.Millisecond)))
	if got := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.id`)); got != "result-title" {
		t.Errorf("the result took the focus to %q, want the result's heading", got)
	}
	do(t, ctx, "tab", chromedp.KeyEvent(kb.Tab))
	if got := run(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.textContent`)); got != "Download talk.wav" {
		t.Errorf("Tab after the result reaches %q, want the download", got)
	}
	rows := run(t, ctx, "levels", chromedp.Evaluate[[][]string](`[...document.querySelectorAll("#levels tbody tr")].map(tr => [...tr.children].map(c => c.textContent))`))
	meanings := map[string]string{}
	for _, r := range rows {
		meanings[r[0]] = r[3]
	}
	for measure, words := range map[string]string{"Loudness": "radio and television", "Loudness range": "", "True peak": "limit"} {
		if m, ok := meanings[measure]; !ok || m == "" || !strings.Contains(m, words) {
			t.Errorf("%s: %q beside the figures", measure, m)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
