package whisperhttp_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/whisperhttp"
)

// burst is a tone in the test audio; the fake server "recognises" each
// as the word "len<milliseconds>".
type burst struct{ start, length time.Duration }

const rate = 44100

// bursts returns stereo audio with tone bursts at the given times.
func bursts(total time.Duration, bs []burst) audio.Source {
	n := int(total.Seconds() * rate)
	b := audio.NewBuffer(2, n)
	for _, x := range bs {
		a := int(x.start.Seconds() * rate)
		e := a + int(x.length.Seconds()*rate)
		for i := a; i < e && i < n; i++ {
			v := 0.5 * math.Sin(2*math.Pi*300*float64(i)/rate)
			b[0][i], b[1][i] = v, v
		}
	}
	return audio.NewBufferSource(b, rate)
}

// fakeServer speaks the transcription protocol: it checks the request,
// finds the tone bursts in the uploaded WAV and answers with one word per
// burst. mode changes the answer's shape.
type fakeServer struct {
	t    *testing.T
	mode string // "words" (top-level words), "segments" (segments only), "nested" (words inside segments)
	key  string

	mu       sync.Mutex
	requests []map[string][]string
	failures int // answer 503 this many times first
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := f.t
	if r.Method != http.MethodPost || r.URL.Path != "/v1/audio/transcriptions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
		return
	}
	f.mu.Lock()
	if f.failures > 0 {
		f.failures--
		f.mu.Unlock()
		w.Header().Set("Retry-After", "0")
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
		return
	}
	f.mu.Unlock()
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		t.Errorf("multipart: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	file, hdr, err := r.FormFile("file")
	if err != nil {
		t.Errorf("file: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	data, _ := io.ReadAll(file)
	if hdr.Header.Get("Content-Type") != "audio/wav" || string(data[:4]) != "RIFF" || binary.LittleEndian.Uint16(data[22:]) != 1 ||
		binary.LittleEndian.Uint32(data[24:]) != 16000 || binary.LittleEndian.Uint16(data[34:]) != 16 {
		t.Errorf("upload is not 16 kHz mono 16-bit WAV: %q", data[:44])
	}
	f.mu.Lock()
	f.requests = append(f.requests, r.MultipartForm.Value)
	f.mu.Unlock()

	// Find the bursts: runs of loud samples, ended by 50 ms of quiet.
	pcm := data[44:]
	n := len(pcm) / 2
	sample := func(i int) int { return int(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) }
	type span struct{ a, b int }
	var spans []span
	quiet := 0
	for i := 0; i < n; i++ {
		if s := sample(i); s > 2000 || s < -2000 {
			if len(spans) > 0 && quiet < 800 {
				spans[len(spans)-1].b = i + 1
			} else {
				spans = append(spans, span{i, i + 1})
			}
			quiet = 0
		} else {
			quiet++
		}
	}
	type word struct {
		Word  string  `json:"word"`
		Start float64 `json:"start"`
		End   float64 `json:"end"`
	}
	type segment struct {
		Start      float64 `json:"start"`
		End        float64 `json:"end"`
		Text       string  `json:"text"`
		AvgLogprob float64 `json:"avg_logprob"`
		Words      []word  `json:"words,omitempty"`
	}
	var words []word
	var texts []string
	for _, s := range spans {
		a, b := float64(s.a)/16000, float64(s.b)/16000
		ms := int(math.Round((b-a)*10)) * 100
		words = append(words, word{Word: fmt.Sprintf(" len%d", ms), Start: a, End: b})
		texts = append(texts, fmt.Sprintf("Len%d,", ms))
	}
	resp := map[string]any{"task": "transcribe", "language": "english", "duration": float64(n) / 16000, "text": strings.Join(texts, " ")}
	seg := segment{Text: " " + strings.Join(texts, " "), AvgLogprob: math.Log(0.8)}
	if len(words) > 0 {
		seg.Start, seg.End = words[0].Start, words[len(words)-1].End
	}
	switch f.mode {
	case "words":
		resp["words"] = words
		resp["segments"] = []segment{seg}
	case "nested":
		seg.Words = words
		resp["segments"] = []segment{seg}
	case "segments":
		resp["segments"] = []segment{seg}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func newClient(t *testing.T, srv *httptest.Server, key string) *whisperhttp.Client {
	t.Helper()
	r, err := speech.New(speech.Config{Type: "whisper", BaseURL: srv.URL + "/v1", Model: "base.en", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	c := r.(*whisperhttp.Client)
	c.RetryDelay = time.Millisecond
	return c
}

func TestRecognizeChunks(t *testing.T) {
	truth := []burst{
		{1 * time.Second, 300 * time.Millisecond}, {2 * time.Second, 500 * time.Millisecond},
		{5500 * time.Millisecond, 200 * time.Millisecond}, {7200 * time.Millisecond, 400 * time.Millisecond},
		{9 * time.Second, 300 * time.Millisecond}, {12 * time.Second, 600 * time.Millisecond},
		{15800 * time.Millisecond, 300 * time.Millisecond}, {19 * time.Second, 500 * time.Millisecond},
	}
	for _, mode := range []string{"words", "nested"} {
		t.Run(mode, func(t *testing.T) {
			fs := &fakeServer{t: t, mode: mode, key: "sk-test"}
			srv := httptest.NewServer(fs)
			defer srv.Close()
			c := newClient(t, srv, "sk-test")
			c.ChunkDuration = 6 * time.Second
			tr, err := c.Recognize(context.Background(), bursts(21*time.Second, truth), speech.Options{Language: "en-US", Keywords: []string{"Auphonic", "audiopost"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(fs.requests) < 4 {
				t.Errorf("%d requests for 21 s in 6 s chunks", len(fs.requests))
			}
			for _, req := range fs.requests {
				for k, v := range map[string]string{"model": "base.en", "response_format": "verbose_json", "language": "en", "prompt": "Auphonic, audiopost.", "temperature": "0"} {
					if got := req[k]; len(got) != 1 || got[0] != v {
						t.Errorf("field %s = %q, want %q", k, got, v)
					}
				}
				if g := req["timestamp_granularities[]"]; len(g) != 2 || g[0] != "word" {
					t.Errorf("timestamp_granularities[] = %q", g)
				}
			}
			if len(tr.Words) != len(truth) {
				t.Fatalf("%d words for %d bursts: %+v", len(tr.Words), len(truth), tr.Words)
			}
			var worst time.Duration
			for i, b := range truth {
				w := tr.Words[i]
				want := fmt.Sprintf("Len%d,", b.length.Milliseconds())
				if w.Text != want {
					t.Errorf("word %d %q, want %q (punctuation from the segment)", i, w.Text, want)
				}
				d := max((w.Start - b.start).Abs(), (w.End - b.start - b.length).Abs())
				worst = max(worst, d)
				if d > 20*time.Millisecond {
					t.Errorf("word %d at %v-%v, burst at %v-%v", i, w.Start, w.End, b.start, b.start+b.length)
				}
				if math.Abs(w.Confidence-0.8) > 1e-9 {
					t.Errorf("word %d confidence %v, want the segment's 0.8", i, w.Confidence)
				}
			}
			if tr.Language != "en" || tr.Recognizer != "whisper" || tr.Model != "base.en" || tr.Duration != 21*time.Second {
				t.Errorf("transcript %+v", tr)
			}
			t.Logf("%d requests; largest word time error %v", len(fs.requests), worst)
		})
	}
}

func TestSegmentsOnly(t *testing.T) {
	fs := &fakeServer{t: t, mode: "segments"}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c := newClient(t, srv, "")
	truth := []burst{{time.Second, 500 * time.Millisecond}, {2 * time.Second, 500 * time.Millisecond}}
	tr, err := c.Recognize(context.Background(), bursts(3*time.Second, truth), speech.Options{})
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b time.Duration) bool { return (a - b).Abs() < time.Millisecond }
	if len(tr.Words) != 2 || !near(tr.Words[0].Start, time.Second) || !near(tr.Words[1].End, 2500*time.Millisecond) || tr.Words[0].End != tr.Words[1].Start {
		t.Errorf("spread words %+v", tr.Words)
	}
	if tr.Language != "en" {
		t.Errorf("language %q from \"english\"", tr.Language)
	}
	if _, ok := fs.requests[0]["language"]; ok {
		t.Error("language sent though none was asked for")
	}
}

func TestRetry(t *testing.T) {
	fs := &fakeServer{t: t, mode: "words", failures: 2}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	c := newClient(t, srv, "")
	if _, err := c.Recognize(context.Background(), bursts(time.Second, nil), speech.Options{}); err != nil {
		t.Fatalf("after two 503s: %v", err)
	}
	fs.failures = 5
	_, err := c.Recognize(context.Background(), bursts(time.Second, nil), speech.Options{})
	if !errors.Is(err, speech.ErrFailed) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("five 503s: %v", err)
	}
}

func TestErrors(t *testing.T) {
	fs := &fakeServer{t: t, mode: "words", key: "right"}
	srv := httptest.NewServer(fs)
	c := newClient(t, srv, "wrong")
	_, err := c.Recognize(context.Background(), bursts(time.Second, nil), speech.Options{})
	if !errors.Is(err, speech.ErrFailed) || !strings.Contains(err.Error(), "Incorrect API key provided") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("bad key: %v", err)
	}
	c.Endpoint = srv.URL + "/elsewhere"
	_, err = c.Recognize(context.Background(), bursts(time.Second, nil), speech.Options{})
	if !errors.Is(err, speech.ErrFailed) || !strings.Contains(err.Error(), "404") {
		t.Errorf("wrong path: %v", err)
	}
	srv.Close()
	c = newClient(t, srv, "right")
	c.Retries = -1
	_, err = c.Recognize(context.Background(), bursts(time.Second, nil), speech.Options{})
	if !errors.Is(err, speech.ErrUnavailable) {
		t.Errorf("closed server: %v", err)
	}

	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") }))
	defer garbage.Close()
	c = newClient(t, garbage, "")
	if _, err := c.Recognize(context.Background(), bursts(time.Second, nil), speech.Options{}); !errors.Is(err, speech.ErrFailed) {
		t.Errorf("not JSON: %v", err)
	}
}

func TestCancel(t *testing.T) {
	entered := make(chan struct{})
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // so the server notices the client leaving
		close(entered)
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer srv.Close()
	defer close(done)
	c := newClient(t, srv, "")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	_, err := c.Recognize(ctx, bursts(time.Second, nil), speech.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct{ base, want string }{
		{"http://localhost:8000", "http://localhost:8000/v1/audio/transcriptions"},
		{"http://localhost:8000/", "http://localhost:8000/v1/audio/transcriptions"},
		{"https://api.openai.com/v1", "https://api.openai.com/v1/audio/transcriptions"},
		{"https://x.example/api/v1/", "https://x.example/api/v1/audio/transcriptions"},
		{"http://h/v1/audio/transcriptions", "http://h/v1/audio/transcriptions"},
	} {
		got, err := whisperhttp.EndpointURL(tc.base)
		if err != nil || got != tc.want {
			t.Errorf("EndpointURL(%q) = %q, %v; want %q", tc.base, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		cfg   speech.Config
		field string
	}{
		{speech.Config{Type: "whisper"}, "base_url"},
		{speech.Config{Type: "openai"}, "api_key"},
		{speech.Config{Type: "whisper", BaseURL: "ftp://x"}, "base_url"},
		{speech.Config{Type: "whisper", BaseURL: "http://user:pw@x"}, "base_url"},
		{speech.Config{Type: "whisper", BaseURL: "http://x", Model: "a\nb"}, "model"},
		{speech.Config{Type: "whisper", BaseURL: "http://x", APIKey: "a b"}, "api_key"},
	} {
		errs := speech.ValidateConfig(tc.cfg)
		if _, ok := errs[tc.field]; !ok {
			t.Errorf("%+v: %v, want an error on %s", tc.cfg, errs, tc.field)
		}
	}
	r, err := speech.New(speech.Config{Type: "openai", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.(*whisperhttp.Client); c.Model != whisperhttp.DefaultModel || c.Type != "openai" || c.Endpoint != "https://api.openai.com/v1/audio/transcriptions" {
		t.Errorf("client %+v", c)
	}
}
