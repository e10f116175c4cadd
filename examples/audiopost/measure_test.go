package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/testsize"
)

// writeTone writes a 16-bit stereo WAV of a 1 kHz tone at peak level db
// dBFS (silence for -Inf) lasting secs.
func writeTone(t *testing.T, path string, db, secs float64) {
	t.Helper()
	const rate = 48000
	n := int(secs * rate)
	data := make([]byte, n*4)
	amp := math.Pow(10, db/20)
	for i := 0; i < n; i++ {
		v := int16(math.Round(amp * 32767 * math.Sin(2*math.Pi*1000*float64(i)/rate)))
		binary.LittleEndian.PutUint16(data[i*4:], uint16(v))
		binary.LittleEndian.PutUint16(data[i*4+2:], uint16(v))
	}
	var h bytes.Buffer
	h.WriteString("RIFF")
	binary.Write(&h, binary.LittleEndian, uint32(36+len(data)))
	h.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(2), uint32(rate), uint32(rate * 4), uint16(4), uint16(16)} {
		binary.Write(&h, binary.LittleEndian, v)
	}
	h.WriteString("data")
	binary.Write(&h, binary.LittleEndian, uint32(len(data)))
	h.Write(data)
	if err := os.WriteFile(path, h.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMeasureJSON(t *testing.T) {
	testsize.SkipRace(t, "measure decodes and meters in one goroutine; the plain run checks its numbers")
	dir := t.TempDir()
	tone := filepath.Join(dir, "tone.wav")
	silent := filepath.Join(dir, "silent.wav")
	writeTone(t, tone, -23, 10)
	writeTone(t, silent, math.Inf(-1), 1)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"measure", "-json", tone, silent}, &out, &errb); err != nil {
		t.Fatalf("run: %v (%s)", err, errb.String())
	}
	sc := bufio.NewScanner(&out)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %s", len(lines), out.String())
	}
	wantKeys := []string{"file", "integrated_lufs", "lra_lu", "max_momentary_lufs", "max_shortterm_lufs", "sample_peak_dbfs", "true_peak_dbtp"}
	for _, m := range lines {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !reflect.DeepEqual(keys, wantKeys) {
			t.Errorf("keys %v, want %v", keys, wantKeys)
		}
	}
	l := lines[0]
	if l["file"] != tone {
		t.Errorf("file = %v", l["file"])
	}
	for k, want := range map[string]float64{"integrated_lufs": -23, "max_momentary_lufs": -23, "max_shortterm_lufs": -23, "true_peak_dbtp": -23, "sample_peak_dbfs": -23, "lra_lu": 0} {
		v, ok := l[k].(float64)
		if !ok || math.Abs(v-want) > 0.1 {
			t.Errorf("%s = %v, want %v ±0.1", k, l[k], want)
		}
	}
	for k, v := range lines[1] {
		if k != "file" && v != nil {
			t.Errorf("silent file: %s = %v, want null", k, v)
		}
	}
}

func TestMeasureTable(t *testing.T) {
	testsize.SkipRace(t, "measure decodes and meters in one goroutine; the plain run checks its numbers")
	dir := t.TempDir()
	tone := filepath.Join(dir, "tone.wav")
	writeTone(t, tone, -20, 5)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"measure", tone}, &out, &errb); err != nil {
		t.Fatalf("run: %v (%s)", err, errb.String())
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "LUFS") || !strings.Contains(lines[1], tone) || !strings.Contains(lines[1], "-20.0") {
		t.Errorf("table:\n%s", out.String())
	}
	// The value columns line up: the header and the row have the same
	// width up to the file column.
	if i, j := strings.Index(lines[0], "FILE"), strings.Index(lines[1], tone); i != j {
		t.Errorf("columns not aligned (%d vs %d):\n%s", i, j, out.String())
	}
}

func TestMeasureErrors(t *testing.T) {
	testsize.SkipRace(t, "measure decodes and meters in one goroutine; the plain run checks its errors")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.wav")
	os.WriteFile(bad, []byte("not audio at all"), 0o644)
	good := filepath.Join(dir, "good.wav")
	writeTone(t, good, -23, 1)
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"measure", "-json", bad, filepath.Join(dir, "missing.wav"), good}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "2 of 3") {
		t.Errorf("err = %v", err)
	}
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Errorf("the good file must still be measured; output:\n%s", out.String())
	}
	if err := run(context.Background(), []string{"measure"}, &out, &errb); err == nil {
		t.Error("no files: no error")
	}
}
