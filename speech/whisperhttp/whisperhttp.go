// Package whisperhttp is a recognizer for HTTP servers that speak the
// widely used speech-to-text request shape POST .../v1/audio/transcriptions
// (OpenAI's API and the whisper servers that copy it: whisper.cpp's
// server, faster-whisper servers, LocalAI, vLLM and others).
//
// The audio is converted to 16 kHz mono 16-bit WAV (speech.Mono16k) and
// uploaded as multipart/form-data with the fields file, model,
// response_format=verbose_json, timestamp_granularities[]=word and
// =segment, temperature=0, and language and prompt when known. Word times
// come from the answer's words (top level, or inside segments); a server
// that gives only segments has their words timed in proportion to their
// length. Confidence is a word's probability when the server gives one,
// else exp(avg_logprob) of its segment, else speech.NoConfidence.
// Punctuation the segment text has and the words lack is put back.
//
// Long recordings are sent in chunks (ChunkDuration, 10 minutes by
// default, about 19 MB: under the 25 MB upload limit of OpenAI's service)
// split at the quietest moment of the last 30 s before each limit, and
// the words are shifted back to their place.
//
// Importing the package registers the recognizer types "whisper" and
// "openai" with speech.Register.
package whisperhttp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/speech"
)

// Types are the recognizer type names this package registers.
var Types = []string{"whisper", "openai"}

// DefaultModel is the model asked for when the configuration names none.
const DefaultModel = "whisper-1"

// OpenAIBaseURL is the base URL of type "openai" when the configuration
// names none: OpenAI's own service, which needs an api_key.
const OpenAIBaseURL = "https://api.openai.com/v1"

// DefaultChunk is the longest audio sent in one request.
const DefaultChunk = 10 * time.Minute

func init() {
	for _, typ := range Types {
		speech.Register(typ, func(cfg speech.Config) (speech.Recognizer, error) { return New(cfg) })
	}
}

// Client is a recognizer that sends audio to a transcription server. Its
// fields must not change while it is in use; it is safe for concurrent use.
type Client struct {
	// Endpoint is the full URL requests go to (see EndpointURL).
	Endpoint string
	// Model is the model field of the request.
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer APIKey".
	APIKey string
	// Type is reported as the transcript's Recognizer ("whisper" when
	// empty).
	Type string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	// Deadlines come from the context given to Recognize.
	HTTPClient *http.Client
	// ChunkDuration is the longest audio sent in one request
	// (DefaultChunk when 0).
	ChunkDuration time.Duration
	// Retries is how often a request that failed on the way or was
	// answered 429 or 5xx is repeated (2 when 0; negative for none).
	Retries int
	// RetryDelay is the wait before the first retry, doubled for each
	// next one (1 s when 0); a Retry-After header of up to a minute
	// replaces it.
	RetryDelay time.Duration
}

// New returns the client a service configuration describes. BaseURL is
// required for type "whisper" (see EndpointURL); type "openai" without
// one means OpenAIBaseURL and then needs an APIKey. Model defaults to
// DefaultModel.
func New(cfg speech.Config) (*Client, error) {
	if cfg.Type == "openai" && strings.TrimSpace(cfg.BaseURL) == "" {
		if cfg.APIKey == "" {
			return nil, &speech.ConfigError{Field: "api_key", Msg: "is required for OpenAI's service (or set base_url to an OpenAI-compatible server)"}
		}
		cfg.BaseURL = OpenAIBaseURL
	}
	ep, err := EndpointURL(cfg.BaseURL)
	if err != nil {
		return nil, &speech.ConfigError{Field: "base_url", Msg: err.Error()}
	}
	if strings.ContainsAny(cfg.Model, "\r\n") || len(cfg.Model) > 200 {
		return nil, &speech.ConfigError{Field: "model", Msg: "must be a model name of at most 200 bytes on one line"}
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n \t") || len(cfg.APIKey) > 4096 {
		return nil, &speech.ConfigError{Field: "api_key", Msg: "must be a token without whitespace"}
	}
	c := &Client{Endpoint: ep, Model: cfg.Model, APIKey: cfg.APIKey, Type: cfg.Type}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	return c, nil
}

// EndpointURL returns the transcription URL for a base URL: a URL that
// already ends in /audio/transcriptions is used as it is, a bare server
// address ("http://host:8000") gets /v1/audio/transcriptions, any other
// path ("https://api.openai.com/v1") gets /audio/transcriptions.
func EndpointURL(base string) (string, error) {
	if strings.TrimSpace(base) == "" {
		return "", errors.New("is required: the server's address, like http://localhost:8000/v1")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("must be an http or https URL, like http://localhost:8000/v1")
	}
	if u.User != nil {
		return "", errors.New("must not contain credentials; set api_key")
	}
	u.Fragment = ""
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/audio/transcriptions"):
	case p == "":
		p = "/v1/audio/transcriptions"
	default:
		p += "/audio/transcriptions"
	}
	u.Path, u.RawPath = p, ""
	return u.String(), nil
}

// fillerPrompt makes whisper write the filled pauses it would otherwise
// clean up.
const fillerPrompt = "Umm, let me think, uh, hmm... Well, er, I mean, erm, yes."

// Recognize implements speech.Recognizer. opts.Language (its primary
// subtag) goes out as language; opts.Keywords as the prompt, which
// biases the spelling of names and terms; opts.Fillers adds a prompt
// that keeps um and uh.
func (c *Client) Recognize(ctx context.Context, src audio.Source, opts speech.Options) (*speech.Transcript, error) {
	pcm, err := speech.Mono16k(ctx, src)
	if err != nil {
		return nil, err
	}
	typ := c.Type
	if typ == "" {
		typ = "whisper"
	}
	t := &speech.Transcript{Language: speech.BaseLanguage(opts.Language), Recognizer: typ, Model: c.Model, Duration: speech.Duration(len(pcm))}
	var prompt []string
	if len(opts.Keywords) > 0 {
		prompt = append(prompt, strings.Join(opts.Keywords, ", ")+".")
	}
	if opts.Fillers {
		prompt = append(prompt, fillerPrompt)
	}
	chunk := int(c.chunkDuration().Seconds() * speech.SampleRate)
	for _, span := range splitPoints(pcm, chunk) {
		r, err := c.request(ctx, pcm[span[0]:span[1]], t.Language, strings.Join(prompt, " "))
		if err != nil {
			return nil, err
		}
		if t.Language == "" {
			t.Language = languageCode(r.Language)
		}
		off := speech.Duration(span[0])
		for _, w := range r.words() {
			w.Start += off
			w.End += off
			t.Words = append(t.Words, w)
		}
	}
	slices.SortStableFunc(t.Words, func(a, b speech.Word) int { return cmp.Compare(a.Start, b.Start) })
	return t, nil
}

func (c *Client) chunkDuration() time.Duration {
	if c.ChunkDuration <= 0 {
		return DefaultChunk
	}
	return max(c.ChunkDuration, time.Second)
}

// splitPoints divides n samples into spans of at most chunk samples, each
// ending at the quietest 100 ms of the last 30 s (or last quarter, if
// shorter) before the limit.
func splitPoints(pcm []int16, chunk int) [][2]int {
	var out [][2]int
	start := 0
	for len(pcm)-start > chunk {
		limit := start + chunk
		window := min(30*speech.SampleRate, chunk/4)
		const step = speech.SampleRate / 10
		best, bestE := limit, math.Inf(1)
		for a := limit - window; a+step <= limit; a += step / 2 {
			var e float64
			for _, s := range pcm[a : a+step] {
				e += float64(s) * float64(s)
			}
			if e < bestE {
				best, bestE = a+step/2, e
			}
		}
		out = append(out, [2]int{start, best})
		start = best
	}
	return append(out, [2]int{start, len(pcm)})
}

// response is the verbose_json answer, with the fields the servers differ
// in all optional.
type response struct {
	Text     string        `json:"text"`
	Language string        `json:"language"`
	Words    []wordJSON    `json:"words"`
	Segments []segmentJSON `json:"segments"`
}

type wordJSON struct {
	Word        string   `json:"word"`
	Start       float64  `json:"start"`
	End         float64  `json:"end"`
	Probability *float64 `json:"probability"`
}

type segmentJSON struct {
	Start      float64    `json:"start"`
	End        float64    `json:"end"`
	Text       string     `json:"text"`
	AvgLogprob *float64   `json:"avg_logprob"`
	Words      []wordJSON `json:"words"`
}

func dur(s float64) time.Duration {
	if math.IsNaN(s) || s < 0 {
		return 0
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

// words turns the answer into words, as the package documentation says.
func (r *response) words() []speech.Word {
	var out []speech.Word
	segConf := func(s segmentJSON) float64 {
		if s.AvgLogprob == nil {
			return speech.NoConfidence
		}
		return min(math.Exp(*s.AvgLogprob), 1)
	}
	add := func(w wordJSON, conf float64) {
		text := strings.TrimSpace(w.Word)
		if text == "" {
			return
		}
		if w.Probability != nil {
			conf = min(max(*w.Probability, 0), 1)
		}
		out = append(out, speech.Word{Text: text, Start: dur(w.Start), End: max(dur(w.End), dur(w.Start)), Confidence: conf})
	}
	switch {
	case len(r.Words) > 0:
		for _, w := range r.Words {
			conf := speech.NoConfidence
			for _, s := range r.Segments {
				if w.Start >= s.Start-0.01 && w.Start < s.End {
					conf = segConf(s)
					break
				}
			}
			add(w, conf)
		}
	default:
		for _, s := range r.Segments {
			if len(s.Words) > 0 {
				for _, w := range s.Words {
					add(w, segConf(s))
				}
				continue
			}
			for _, w := range spreadWords(s) {
				add(w, segConf(s))
			}
		}
	}
	r.restorePunctuation(out)
	return out
}

// spreadWords times the words of a segment that has none, in proportion
// to their length in characters (plus one for the space).
func spreadWords(s segmentJSON) []wordJSON {
	toks := strings.Fields(s.Text)
	total := 0
	for _, t := range toks {
		total += len([]rune(t)) + 1
	}
	var out []wordJSON
	at, span := s.Start, max(s.End-s.Start, 0)
	for _, t := range toks {
		d := span * float64(len([]rune(t))+1) / float64(total)
		out = append(out, wordJSON{Word: t, Start: at, End: at + d})
		at += d
	}
	return out
}

// restorePunctuation replaces words by the tokens of their segment's text
// when both list the same words, so "Hello" becomes "Hello," as the
// segment writes it.
func (r *response) restorePunctuation(ws []speech.Word) {
	for _, s := range r.Segments {
		toks := strings.Fields(s.Text)
		if len(toks) == 0 {
			continue
		}
		lo := slices.IndexFunc(ws, func(w speech.Word) bool { return w.Start >= dur(s.Start)-10*time.Millisecond })
		if lo < 0 || lo+len(toks) > len(ws) {
			continue
		}
		same := true
		for i, tok := range toks {
			if !slices.Equal(speech.NormalizeWords(tok), speech.NormalizeWords(ws[lo+i].Text)) {
				same = false
				break
			}
		}
		if same {
			for i, tok := range toks {
				ws[lo+i].Text = tok
			}
		}
	}
}

// languages maps the language names OpenAI's verbose_json reports to codes.
var languages = map[string]string{
	"english": "en", "german": "de", "french": "fr", "spanish": "es", "italian": "it", "portuguese": "pt",
	"dutch": "nl", "polish": "pl", "swedish": "sv", "danish": "da", "norwegian": "no", "finnish": "fi",
	"russian": "ru", "ukrainian": "uk", "czech": "cs", "turkish": "tr", "greek": "el", "japanese": "ja",
	"chinese": "zh", "korean": "ko", "arabic": "ar", "hindi": "hi",
}

func languageCode(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if c, ok := languages[s]; ok {
		return c
	}
	if len(s) <= 3 {
		return s
	}
	return ""
}

// responseLimit bounds an answer; an hour of words is well under 10 MB.
const responseLimit = 64 << 20

// request sends one chunk, with retries.
func (c *Client) request(ctx context.Context, pcm []int16, lang, prompt string) (*response, error) {
	body, ctype, err := c.form(pcm, lang, prompt)
	if err != nil {
		return nil, err
	}
	retries := c.Retries
	if retries == 0 {
		retries = 2
	}
	delay := c.RetryDelay
	if delay <= 0 {
		delay = time.Second
	}
	for attempt := 0; ; attempt++ {
		r, wait, err := c.send(ctx, body, ctype)
		if err == nil {
			return r, nil
		}
		if wait < 0 || attempt >= retries || ctx.Err() != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("whisperhttp: recognition stopped: %w", cerr)
			}
			return nil, err
		}
		if wait == 0 {
			wait = delay << attempt
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("whisperhttp: recognition stopped: %w", ctx.Err())
		case <-timer.C:
		}
	}
}

// form builds the multipart body.
func (c *Client) form(pcm []int16, lang, prompt string) ([]byte, string, error) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	h := make(textproto.MIMEHeader)
	h.Set("Content-Disposition", `form-data; name="file"; filename="audio.wav"`)
	h.Set("Content-Type", "audio/wav")
	fw, err := mw.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if err := speech.WriteWAV(fw, pcm); err != nil {
		return nil, "", err
	}
	fields := [][2]string{
		{"model", c.Model},
		{"response_format", "verbose_json"},
		{"timestamp_granularities[]", "word"},
		{"timestamp_granularities[]", "segment"},
		{"temperature", "0"},
	}
	if lang != "" {
		fields = append(fields, [2]string{"language", lang})
	}
	if prompt != "" {
		fields = append(fields, [2]string{"prompt", prompt})
	}
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return b.Bytes(), mw.FormDataContentType(), nil
}

// send makes one request. On failure wait says whether to retry: -1 no,
// 0 after the usual delay, more after that long (Retry-After).
func (c *Client) send(ctx context.Context, body []byte, ctype string) (*response, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("%w: %v", speech.ErrFailed, err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: cannot reach the speech recognition server %s: %v", speech.ErrUnavailable, c.Endpoint, unwrapURL(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, responseLimit+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: reading the answer of %s: %v", speech.ErrFailed, c.Endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		err := fmt.Errorf("%w: %s answered %s: %s", speech.ErrFailed, c.Endpoint, resp.Status, errorMessage(data))
		switch {
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
			return nil, retryAfter(resp.Header.Get("Retry-After")), err
		}
		return nil, -1, err
	}
	if len(data) > responseLimit {
		return nil, -1, fmt.Errorf("%w: the answer of %s is larger than %d MB", speech.ErrFailed, c.Endpoint, responseLimit>>20)
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, -1, fmt.Errorf("%w: the answer of %s is not verbose_json: %v", speech.ErrFailed, c.Endpoint, err)
	}
	return &r, 0, nil
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func retryAfter(h string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s > 0 {
		return min(time.Duration(s)*time.Second, time.Minute)
	}
	return 0
}

// errorMessage extracts {"error": {"message": ...}} (or {"error": "..."},
// {"detail": ...}) from an error answer, or its first bytes.
func errorMessage(data []byte) string {
	var e struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &e) == nil {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case json.Unmarshal(e.Detail, &s) == nil && s != "":
			return s
		case len(e.Detail) > 0:
			return string(e.Detail)
		}
	}
	msg := strings.Join(strings.Fields(string(data)), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if msg == "" {
		return "no message"
	}
	return msg
}
