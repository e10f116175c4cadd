package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// operation is one documented path and method.
type operation struct {
	path, method string // method in upper case
	op           map[string]any
}

func (o operation) id() string { s, _ := o.op["operationId"].(string); return s }

func (o operation) String() string { return o.method + " " + o.path }

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operations lists the document's operations sorted by path and method.
func operations(t *testing.T, doc map[string]any) []operation {
	t.Helper()
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("the document has no paths")
	}
	var out []operation
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item := paths[p].(map[string]any)
		for _, m := range httpMethods {
			if op, ok := item[m].(map[string]any); ok {
				out = append(out, operation{path: p, method: strings.ToUpper(m), op: op})
			}
		}
	}
	return out
}

func loadOpenAPIFile(t *testing.T) (map[string]any, schemaDoc) {
	t.Helper()
	src, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeJSON(t, src)
	return doc, schemaDoc{root: doc}
}

// deref follows a $ref of a parameter, response or request body.
func (d schemaDoc) deref(t *testing.T, v any) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		target, err := d.resolve(ref)
		if err != nil {
			t.Fatal(err)
		}
		return d.deref(t, target)
	}
	return m
}

var templateParam = regexp.MustCompile(`\{([^}]+)\}`)

// TestOpenAPIDocument checks the document's own consistency: version,
// references, operation ids, path parameters, security schemes, tags,
// and that every schema uses only keywords the validator checks.
func TestOpenAPIDocument(t *testing.T) {
	doc, d := loadOpenAPIFile(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi is %v, want 3.1.0", doc["openapi"])
	}
	if _, ok := doc["servers"]; ok {
		t.Error("the file has servers; the handler adds its BaseURL")
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] == nil || info["version"] == nil {
		t.Error("info needs title and version")
	}
	// Every $ref resolves.
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				if _, err := d.resolve(ref); err != nil {
					t.Errorf("%s: %v", at, err)
				}
			}
			for k, x := range v {
				walk(x, at+"/"+k)
			}
		case []any:
			for i, x := range v {
				walk(x, at+"/"+strconv.Itoa(i))
			}
		}
	}
	walk(doc, "#")

	comps := doc["components"].(map[string]any)
	schemes := comps["securitySchemes"].(map[string]any)
	checkSecurity := func(at string, sec any) {
		for _, req := range sec.([]any) {
			for name := range req.(map[string]any) {
				if schemes[name] == nil {
					t.Errorf("%s: unknown security scheme %q", at, name)
				}
			}
		}
	}
	checkSecurity("security", doc["security"])
	tags := map[string]bool{}
	for _, tag := range doc["tags"].([]any) {
		tags[tag.(map[string]any)["name"].(string)] = true
	}

	ids := map[string]string{}
	for _, o := range operations(t, doc) {
		id := o.id()
		switch {
		case id == "":
			t.Errorf("%v has no operationId", o)
		case ids[id] != "":
			t.Errorf("%v and %s share the operationId %s", o, ids[id], id)
		}
		ids[id] = o.String()
		if o.op["summary"] == nil {
			t.Errorf("%v has no summary", o)
		}
		if rs, _ := o.op["responses"].(map[string]any); len(rs) == 0 {
			t.Errorf("%v has no responses", o)
		}
		for _, tag := range o.op["tags"].([]any) {
			if !tags[tag.(string)] {
				t.Errorf("%v: tag %v is not declared", o, tag)
			}
		}
		if sec, ok := o.op["security"]; ok {
			checkSecurity(o.String(), sec)
		}
		// Path parameters: exactly the template's, all required.
		var want []string
		for _, m := range templateParam.FindAllStringSubmatch(o.path, -1) {
			want = append(want, m[1])
		}
		var got []string
		params, _ := o.op["parameters"].([]any)
		for _, p := range params {
			p := d.deref(t, p)
			if p["in"] == "path" {
				got = append(got, p["name"].(string))
				if p["required"] != true {
					t.Errorf("%v: path parameter %v is not required", o, p["name"])
				}
			}
		}
		if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			t.Errorf("%v: path parameters %v, the template has %v", o, got, want)
		}
	}

	// The validator knows every keyword the schemas use: validating any
	// value walks the keywords it reaches, so walk them all with null.
	for name, s := range comps["schemas"].(map[string]any) {
		for _, e := range d.validate(s, nil, name) {
			if strings.Contains(e, "does not know") {
				t.Error(e)
			}
		}
	}
}

// TestOpenAPIErrorCodes checks the ErrorCode schema against the error
// table of doc.go, the Code constants of envelope.go and the error
// responses.
func TestOpenAPIErrorCodes(t *testing.T) {
	doc, d := loadOpenAPIFile(t)
	ec := doc["components"].(map[string]any)["schemas"].(map[string]any)["ErrorCode"].(map[string]any)
	var enum []string
	for _, c := range ec["enum"].([]any) {
		enum = append(enum, c.(string))
	}
	statuses := map[string]int{}
	for c, s := range ec["x-http-status"].(map[string]any) {
		statuses[c] = intOf(s)
	}
	if !slices.Equal(slices.Sorted(slices.Values(enum)), slices.Sorted(maps.Keys(statuses))) {
		t.Errorf("ErrorCode enum %v and x-http-status %v differ", enum, statuses)
	}

	// The table in doc.go.
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(src), "// # Errors")
	table, _, _ = strings.Cut(table, "// # ")
	row := regexp.MustCompile(`(?m)^//\s+([1-5][0-9][0-9])\s+([a-z_]+)\s`)
	docGo := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		docGo[m[2]], _ = strconv.Atoi(m[1])
	}
	if len(docGo) == 0 {
		t.Fatal("no error table in doc.go")
	}
	if !maps.Equal(docGo, statuses) {
		t.Errorf("doc.go's error table %v differs from the document's %v", docGo, statuses)
	}

	// Every Code constant of the envelope (httpapi's are its aliases).
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "internal", "envelope", "envelope.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Code") || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		n++
		if code, _ := strconv.Unquote(lit.Value); !slices.Contains(enum, code) {
			t.Errorf("%s = %s is not in the ErrorCode enum", vs.Names[0].Name, lit.Value)
		}
		return true
	})
	if n < 10 {
		t.Errorf("found only %d Code constants in envelope.go", n)
	}

	// Each error response allows only codes of its status.
	for name, r := range doc["components"].(map[string]any)["responses"].(map[string]any) {
		sch, ok := d.deref(t, r)["content"].(map[string]any)["application/json"]
		if !ok {
			continue
		}
		all, _ := sch.(map[string]any)["schema"].(map[string]any)["allOf"].([]any)
		if len(all) != 2 {
			continue
		}
		props := all[1].(map[string]any)["properties"].(map[string]any)
		status := intOf(props["status_code"].(map[string]any)["const"])
		for _, c := range props["error_code"].(map[string]any)["enum"].([]any) {
			if statuses[c.(string)] != status {
				t.Errorf("response %s (%d) allows %s, which comes with %d", name, status, c, statuses[c.(string)])
			}
		}
	}
}

// TestOpenAPIRoutes checks the document against the handler's route
// table, which routes() records as it registers: every route it serves
// is documented, and every documented path and method reaches a route
// registered for that method (not the 405 fallback nor the 404 of
// unknown API paths).
func TestOpenAPIRoutes(t *testing.T) {
	testsize.SkipRace(t, "checks the document; the plain run does, and the race run is for goroutines")
	for _, base := range []string{"http://127.0.0.1:8080", "http://127.0.0.1:8080/mount"} {
		t.Run(base, func(t *testing.T) {
			h := handlerAt(t, base)
			doc, _ := loadOpenAPIFile(t)
			covered := map[string]bool{}
			for _, o := range operations(t, doc) {
				r := httptest.NewRequest(o.method, base+samplePathFor(o.path, fixtures{"p", "q", "s", "l"}), nil)
				label := httpapi.PatternOf(h, r)
				if label == "unmatched" || label == "/api/" || !strings.HasPrefix(label, o.method+" ") {
					t.Errorf("%v is documented, but routes to %q", o, label)
				}
				covered[label] = true
			}
			routes := httpapi.RoutesOf(h)
			if len(routes) < 15 {
				t.Fatalf("the route table has %d routes", len(routes))
			}
			for _, rt := range routes {
				for _, m := range rt.Methods {
					if !covered[m+" "+rt.Path] {
						t.Errorf("%s %s is served but not documented", m, rt.Path)
					}
				}
			}
		})
	}
}

// fixtures are the uuids of the resources a request's path names.
type fixtures struct{ production, preset, service, live string }

// samplePathFor fills a documented path's parameters.
func samplePathFor(path string, f fixtures) string {
	uuid := f.production
	switch {
	case strings.HasPrefix(path, "/api/preset/"):
		uuid = f.preset
	case strings.HasPrefix(path, "/api/service/"):
		uuid = f.service
	case strings.HasPrefix(path, "/api/livestream/"):
		uuid = f.live
	}
	filename := "out.mp3"
	if strings.Contains(path, "{id}") {
		filename = "intro.wav"
	}
	return strings.NewReplacer("{uuid}", uuid, "{kind}", "audio-result", "{id}", "intro", "{filename}", filename).Replace(path)
}

// sampleBodies are the request bodies TestOpenAPIRequests sends, by
// operationId: JSON values (checked against the documented request
// schema), form strings, or multipart parts; nil is no body, or a cover
// image for an upload. Every operation needs an entry, so a newly
// documented one gets a sample here.
var sampleBodies = map[string]any{
	"createProduction": map[string]any{"metadata": map[string]any{"title": "T", "tags": "a, b", "year": 2026},
		"output_files": []any{map[string]any{"format": "mp3", "bitrate": "128"}}, "chapters": []any{map[string]any{"start": "00:00:00.100", "title": "C"}},
		"algorithms": map[string]any{"loudnesstarget": -23, "denoise": true}},
	"updateProduction":                 map[string]any{"metadata": map[string]any{"artist": "A"}, "webhook": nil},
	"setProductionMetadata":            map[string]any{"title": "X", "location": map[string]any{"latitude": 48.2, "longitude": "16.37"}},
	"setProductionOutputFiles":         []any{map[string]any{"format": "flac"}},
	"setProductionOutgoingServices":    []any{},
	"setProductionAlgorithms":          map[string]any{"leveler": false, "maxpeak": -1},
	"setProductionChapters":            []any{map[string]any{"start": 0.05, "title": "C2", "url": "https://example.org/c"}},
	"setProductionMultiInputFiles":     []any{},
	"setProductionSpeechRecognition":   nil,
	"setProductionWebhook":             map[string]any{"webhook": "https://hook.example.org/x"},
	"createPreset":                     map[string]any{"preset_name": "P", "output_files": []any{map[string]any{"format": "opus"}}},
	"updatePreset":                     map[string]any{"preset_name": "Q"},
	"setPresetMetadata":                map[string]any{"genre": "Podcast"},
	"setPresetOutputFiles":             []any{map[string]any{"format": "aac", "bitrate": 64}},
	"setPresetOutgoingServices":        []any{},
	"setPresetAlgorithms":              map[string]any{"normloudness": true},
	"setPresetMultiInputFiles":         []any{},
	"setPresetSpeechRecognition":       nil,
	"setPresetWebhook":                 "https://hook.example.org/p",
	"oauthToken":                       "grant_type=password&username=alice&password=wrong&client_id=nobody",
	"oauthDecide":                      "client_id=nobody&response_type=code&csrf_token=x&decision=approve",
	"createSimpleProduction":           []part{field("title", "Simple"), field("tags", "a,b"), field("leveler", "true")},
	"uploadProductionFiles":            nil, // an image, made by the test
	"uploadPresetImage":                nil,
	"clearProductionOutputFiles":       nil,
	"clearProductionChapters":          nil,
	"clearProductionMultiInputFiles":   nil,
	"clearProductionSpeechRecognition": nil,
	"clearProductionWebhook":           nil,
	"clearPresetOutputFiles":           nil,
	"clearPresetMultiInputFiles":       nil,
	"clearPresetSpeechRecognition":     nil,
	"clearPresetWebhook":               nil,
	"startProduction":                  nil,
	"stopProduction":                   nil,
	"deleteProduction":                 nil,
	"deletePreset":                     nil,
	"createLiveStream": map[string]any{"name": "Radio", "source": "http://93.184.216.34/in.mp3",
		"destinations": []any{map[string]any{"url": "icecast://source:pw@93.184.216.34:8000/out.mp3", "format": "mp3", "bitrate": 128}},
		"algorithms":   map[string]any{"loudnesstarget": -18}},
	"listLiveStreams":         nil,
	"getLiveStream":           nil,
	"deleteLiveStream":        nil,
	"startLiveStream":         nil,
	"stopLiveStream":          nil,
	"getLiveStreamStatus":     nil,
	"getProduction":           nil,
	"getPreset":               nil,
	"getProductionStatus":     nil,
	"listProductions":         nil,
	"listPresets":             nil,
	"listServices":            nil,
	"listServiceFiles":        nil,
	"createService":           map[string]any{"type": "webdav", "url": "https://dav.example.org/pod/", "username": "u", "password": "p", "test": false},
	"updateService":           map[string]any{"display_name": "Renamed", "password": nil, "test": false},
	"getService":              nil,
	"deleteService":           nil,
	"testService":             nil,
	"getInfo":                 nil,
	"getInfoServiceTypes":     nil,
	"getInfoAlgorithms":       nil,
	"getInfoOutputFiles":      nil,
	"getInfoProductionStatus": nil,
	"getUser":                 nil,
	"download":                nil,
	"downloadMultiInput":      nil,
	"getOpenAPI":              nil,
	"healthz":                 nil,
	"readyz":                  nil,
	"metrics":                 nil,
	"oauthAuthorize":          nil,
}

// makeFixtures stores a production with an uploaded input, an output
// and an intro file, a preset and an incoming service of user A.
func (e *env) makeFixtures(t *testing.T, wav []byte) fixtures {
	t.Helper()
	ctx := context.Background()
	var f fixtures
	f.production = e.create(e.keyA, map[string]any{"output_files": []any{map[string]any{"format": "mp3"}}})
	e.must(e.upload("/api/production/"+f.production+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: wav}))
	f.preset = e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{"preset_name": "F"})).obj(t)["uuid"].(string)
	svc := storage.Service{Owner: e.userA.ID, Type: "webdav", DisplayName: "Web", Incoming: true,
		Config: []byte(`{"url":"http://127.0.0.1:1/dav/","username":"u","password":"p"}`)}
	if err := e.store.CreateService(ctx, &svc); err != nil {
		t.Fatal(err)
	}
	f.service = svc.UUID
	f.live = e.must(e.req("POST", "/api/livestreams.json", e.keyA, sampleBodies["createLiveStream"])).obj(t)["uuid"].(string)
	for key, data := range map[string][]byte{
		production.OutputKey(f.production, "out.mp3"):           []byte("ID3 not really"),
		production.IntroKey(f.production, "intro", "intro.wav"): wav,
	} {
		w, err := e.blobs.Create(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// TestOpenAPIRequests sends a request to every documented operation with
// real resources and checks the answer against the document: its status
// is documented (and is no routing 404 or 405), its Content-Type is one
// the response lists, and a JSON body validates against the response's
// schema. Operations that need credentials are also sent without and
// must answer their documented 401.
func TestOpenAPIRequests(t *testing.T) {
	testsize.SkipRace(t, "checks the document; the plain run does, and the race run is for goroutines")
	e := newEnv(t)
	doc := decodeJSON(t, e.getRaw("/api/openapi.json", ""))
	d := schemaDoc{root: doc}
	wav := makeWAV(t, 1, 8000, 0.2, audio.Tags{})
	png := makePNG(t, 8, 8)
	for _, o := range operations(t, doc) {
		body, ok := sampleBodies[o.id()]
		if !ok {
			t.Errorf("%v: no sample body for %s in sampleBodies", o, o.id())
			continue
		}
		f := e.makeFixtures(t, wav)
		target := e.base + samplePathFor(o.path, f)
		queries := []string{""}
		if o.id() == "listProductions" || o.id() == "listPresets" {
			queries = []string{"?limit=5&offset=0", "?minimal_data=true", "?uuids_only=1&limit=2", "?limit=-1"}
		}
		for _, q := range queries {
			e.checkOperation(t, d, o, target+q, body, png)
		}
	}
}

// checkOperation sends one request to an operation, with credentials
// when it needs them and once more without, and checks the answers.
func (e *env) checkOperation(t *testing.T, d schemaDoc, o operation, target string, body any, png []byte) {
	t.Helper()
	var rd io.Reader
	ct := ""
	if rb, ok := o.op["requestBody"]; ok {
		content := d.deref(t, rb)["content"].(map[string]any)
		switch {
		case content["application/json"] != nil:
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			schema := content["application/json"].(map[string]any)["schema"]
			for _, err := range d.validate(schema, decodeAny(t, b), "request") {
				t.Errorf("%v: the sample body does not match the request schema: %s", o, err)
			}
			rd, ct = bytes.NewReader(b), "application/json"
		case content["application/x-www-form-urlencoded"] != nil:
			rd, ct = strings.NewReader(body.(string)), "application/x-www-form-urlencoded"
		case content["multipart/form-data"] != nil:
			parts, _ := body.([]part)
			if parts == nil {
				parts = []part{{field: "image", name: "cover.png", data: png}}
			}
			rd, ct = multipartBody(t, parts...)
		default:
			t.Fatalf("%v: no request body sample for %v", o, slices.Collect(maps.Keys(content)))
		}
	}
	r, err := http.NewRequest(o.method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	_, public := o.op["security"]
	if !public {
		r.Header.Set("Authorization", "Bearer "+e.keyA)
	}
	status, header, raw := e.send(r)
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		t.Errorf("%v answered %d: %s", o, status, raw)
		return
	}
	checkResponse(t, d, o, status, header, raw)
	if testing.Verbose() {
		t.Logf("%v: %d %.200q", o, status, raw)
	}
	if !public {
		r, _ := http.NewRequest(o.method, target, nil)
		status, header, raw := e.send(r)
		if status != http.StatusUnauthorized {
			t.Errorf("%v without credentials answered %d, want 401", o, status)
		}
		checkResponse(t, d, o, status, header, raw)
	}
}

// checkResponse checks one answer against the operation's documented
// responses.
func checkResponse(t *testing.T, d schemaDoc, o operation, status int, header http.Header, raw []byte) {
	t.Helper()
	rs := o.op["responses"].(map[string]any)
	rsp, ok := rs[strconv.Itoa(status)]
	if !ok {
		t.Errorf("%v answered %d, which is not documented (%v): %.300s", o, status, slices.Sorted(maps.Keys(rs)), raw)
		return
	}
	content, _ := d.deref(t, rsp)["content"].(map[string]any)
	if len(content) == 0 {
		return
	}
	mt, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		t.Errorf("%v %d: Content-Type %q: %v", o, status, header.Get("Content-Type"), err)
		return
	}
	var media map[string]any
	for k, v := range content {
		base, _, _ := strings.Cut(k, ";")
		major, _, _ := strings.Cut(mt, "/")
		if base == mt || base == "*/*" || base == major+"/*" {
			media = v.(map[string]any)
		}
	}
	if media == nil {
		t.Errorf("%v %d: Content-Type %s is not documented (%v)", o, status, mt, slices.Collect(maps.Keys(content)))
		return
	}
	if mt != "application/json" {
		return
	}
	d.closed = true
	for _, err := range d.validate(media["schema"], decodeAny(t, raw), "response") {
		t.Errorf("%v %d: %s", o, status, err)
	}
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %.200s", err, b)
	}
	return v
}

// getRaw GETs path and returns the body of a 200.
func (e *env) getRaw(path, key string) []byte {
	e.t.Helper()
	r, _ := http.NewRequest("GET", e.base+path, nil)
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	status, _, raw := e.send(r)
	if status != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	return raw
}

// TestOpenAPIServed checks how the document is served: without
// credentials, as application/json, with the handler's BaseURL as its
// server and the OAuth URLs under it, revalidated by ETag.
func TestOpenAPIServed(t *testing.T) {
	testsize.SkipRace(t, "checks the document; the plain run does, and the race run is for goroutines")
	e := newEnv(t)
	r, _ := http.NewRequest("GET", e.base+"/api/openapi.json", nil)
	status, h, raw := e.send(r)
	if status != 200 || h.Get("Content-Type") != "application/json" || h.Get("ETag") == "" {
		t.Fatalf("GET openapi.json: %d %v", status, h)
	}
	served := decodeJSON(t, raw)
	servers, _ := served["servers"].([]any)
	if len(servers) != 1 || servers[0].(map[string]any)["url"] != e.base {
		t.Errorf("servers %v, want %s", servers, e.base)
	}
	flows := get(served, "components.securitySchemes.oauth2.flows").(map[string]any)
	if u := get(flows, "password.tokenUrl"); u != e.base+"/oauth2/token/" {
		t.Errorf("tokenUrl %v", u)
	}
	if u := get(flows, "authorizationCode.authorizationUrl"); u != e.base+"/oauth2/authorize/" {
		t.Errorf("authorizationUrl %v", u)
	}
	// Apart from those, the served document is the file.
	file, _ := loadOpenAPIFile(t)
	delete(served, "servers")
	for _, f := range []map[string]any{served, file} {
		fl := get(f, "components.securitySchemes.oauth2.flows").(map[string]any)
		fl["password"].(map[string]any)["tokenUrl"] = ""
		fl["authorizationCode"].(map[string]any)["tokenUrl"] = ""
		fl["authorizationCode"].(map[string]any)["authorizationUrl"] = ""
	}
	if !jsonEqual(any(served), any(file)) {
		t.Error("the served document differs from openapi.json")
	}

	r, _ = http.NewRequest("GET", e.base+"/api/openapi.json", nil)
	r.Header.Set("If-None-Match", h.Get("ETag"))
	if status, _, _ := e.send(r); status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", status)
	}
	res := e.req("POST", "/api/openapi.json", "", "{}")
	e.wantErr(res, http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed)
	if res.Header.Get("Allow") != "GET" {
		t.Errorf("Allow %q", res.Header.Get("Allow"))
	}
	if h.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("Access-Control-Allow-Origin %q", h.Get("Access-Control-Allow-Origin"))
	}

	// Under a base path, the server and the OAuth URLs carry it.
	const mount = "https://audio.example.org/post"
	rec := probe(handlerAt(t, mount), mount+"/api/openapi.json")
	if rec.Code != 200 {
		t.Fatalf("GET %s/api/openapi.json: %d", mount, rec.Code)
	}
	served = decodeJSON(t, rec.Body.Bytes())
	if u := get(served, "servers.0.url"); u != mount {
		t.Errorf("server %v, want %s", u, mount)
	}
	if u := get(served, "components.securitySchemes.oauth2.flows.password.tokenUrl"); u != mount+"/oauth2/token/" {
		t.Errorf("tokenUrl %v under a base path", u)
	}
}

// fillLevels sets every Level field of the struct v to l.
func fillLevels(v reflect.Value, l production.Level) {
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() == reflect.TypeFor[production.Level]() {
			f.Set(reflect.ValueOf(l))
		}
	}
}

// fillFields sets every exported field of the struct v, recursively, to a
// value other than its zero (strings "x", numbers 1, true, now, a slice
// of one element, pointers to such values), so that JSON written from it
// carries every property, omitempty ones included.
func fillFields(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillFields(v.Field(i))
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillFields(v.Elem())
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillFields(v.Index(0))
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	}
}

// TestOpenAPISchemasMatchTypes validates JSON of the domain types with
// every optional part set against their schemas, and the golden
// responses of the API tests against the response schemas.
func TestOpenAPISchemasMatchTypes(t *testing.T) {
	_, d := loadOpenAPIFile(t)
	d.closed = true
	check := func(schema string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range d.validate(map[string]any{"$ref": "#/components/schemas/" + schema}, decodeAny(t, b), schema) {
			t.Error(err)
		}
	}
	lv := func(v float64, u string) production.Level { return production.Level{Value: v, Unit: u} }
	den, hum := 12.0, 50.0
	stats := production.Statistics{
		Levels: &production.Levels{
			Input: production.InputLevels{LRA: lv(8, "LU"), NoiseLevel: lv(-70, "dB"), MaxMomentary: lv(-10, "LUFS"), SignalLevel: lv(-20, "dB"),
				SNR: lv(50, "dB"), MaxShortterm: lv(-12, "LUFS"), Loudness: lv(-20, "LUFS")},
			Output: production.OutputLevels{LRA: lv(5, "LU"), MaxShortterm: lv(-13, "LUFS"), MaxMomentary: lv(-11, "LUFS"), GainMin: lv(-3, "dB"),
				Peak: lv(-1, "dBTP"), GainMean: lv(2, "dB"), Loudness: lv(-16, "LUFS"), GainMax: lv(9, "dB")},
		},
		MusicSpeech:       []production.MusicSpeechSegment{{Label: "speech", Start: 0, Stop: 30e9}},
		NoiseHumReduction: []production.NoiseHumSegment{{Denoise: &den, Start: 0, Stop: 1e9}, {Dehum: &hum, Start: 1e9, Stop: 2e9}},
		Tracks: []production.TrackStatistics{{Identifier: "t1", Activity: [][2]float64{{0, 1.5}},
			MusicSpeech: []production.MusicSpeechSegment{{Label: "music", Start: 0, Stop: 1e9}}}},
		Master: &production.MasterStatistics{},
	}
	fillLevels(reflect.ValueOf(&stats.Tracks[0].Levels).Elem(), production.DB(-3))
	fillLevels(reflect.ValueOf(&stats.Master.Levels).Elem(), production.DBTP(-1))
	stats.Tracks[0].Levels.Loudness = production.LUFS(math.Inf(-1)) // silence: [null, "LUFS"]
	check("Statistics", stats)
	check("Statistics", production.Statistics{})

	size := int64(1234567)
	yes := true
	page := "https://hosting.example.org/ep1"
	errAt := production.StatusAudioEncoding
	img := "https://example.org/chapter.png"
	sub := production.DefaultSubtitles()
	p := &production.Production{
		UUID: "u", Status: production.StatusDone,
		Metadata: production.Metadata{Title: "T", Tags: []string{"a"}, Location: &production.Location{Latitude: "1.5", Longitude: "-2"}},
		Chapters: []production.Chapter{{Start: 1e9, Title: "C", URL: "https://example.org", Image: &img}},
		OutputFiles: []production.OutputFile{
			{Format: "mp3", Bitrate: 128, Size: &size, DownloadURL: "https://example.org/dl", Checksum: "abc", OutgoingServices: []string{"s"}},
			{Format: "video", Subtitles: &sub},
		},
		OutgoingServices: []production.OutgoingService{{UUID: "s", Downloadable: &yes, Sharing: "public", TransferSuccess: &yes, ResultPage: &page, ResultURLs: []string{page}}},
		Algorithms: production.AlgorithmValues{"leveler": true, "loudnesstarget": -16, "maxpeak": -1.5, "denoisemethod": "dynamic",
			"segments": []production.Segment{{Start: 0, Stop: 2, DenoiseMethod: "speech"}}},
		MultiInputFiles: []production.MultiInputFile{{Type: "multitrack", ID: "t1", Service: "s", InputFile: "a.wav", Offset: 1,
			Algorithms: production.AlgorithmValues{"gain": -3, "pan": "L50"}}},
		SpeechRecognition: &production.SpeechRecognition{UUID: "sr", Keywords: []string{"k"}, Language: "en", Type: "x"},
		Service:           &page, Image: &page, Thumbnail: &page, Webhook: &page,
		CreationTime: production.Now(), ChangeTime: production.Now(),
		Cuts:        []production.Cut{{Start: 1, Stop: 2}},
		ErrorStatus: &errAt, WarningStatus: &errAt, Statistics: stats,
	}
	check("Production", p)
	check("Production", &production.Production{})
	now := production.Now()
	failed := *p
	failed.Fail(production.StatusAudioProcessing, production.ErrorInput, "audio: malformed data")
	failed.WebhookDeliveries = []production.WebhookDelivery{
		{Status: production.StatusError, State: "failed", Attempts: 1, Created: now, LastAttempt: &now, Error: "refused"},
		{Status: production.StatusDone, State: "pending", Created: now, NextAttempt: &now, HTTPStatus: 503},
	}
	check("Production", &failed)
	pr := &preset.Preset{UUID: "p", PresetName: "P", OutputFiles: p.OutputFiles, OutgoingServices: p.OutgoingServices,
		Algorithms: p.Algorithms, MultiInputFiles: p.MultiInputFiles, SpeechRecognition: p.SpeechRecognition, Image: &page, CreationTime: production.Now()}
	check("Preset", pr)
	check("Preset", &preset.Preset{})

	// Live streams: every field of the resource and of the status report
	// set, the worker's figures included, so that a field the status
	// gains without the document fails here (the API tests' streams have
	// no worker and report no figures).
	ls := &livestream.LiveStream{}
	fillFields(reflect.ValueOf(ls).Elem())
	ls.State, ls.Algorithms = livestream.Running, production.AlgorithmValues{"leveler": true, "loudnesstarget": -16}
	ls.Destinations[0].Format = "mp3"
	check("LiveStream", ls)
	figures := &livestream.Figures{}
	fillFields(reflect.ValueOf(figures).Elem())
	check("LiveStreamStatus", &livestream.Report{LiveStream: ls, Figures: figures})
	check("LiveStreamStatus", &livestream.Report{LiveStream: ls})

	for file, schema := range map[string]string{"testdata/production.golden.json": "ProductionResponse", "testdata/preset.golden.json": "PresetResponse"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range d.validate(map[string]any{"$ref": "#/components/schemas/" + schema}, decodeAny(t, raw), file) {
			t.Error(err)
		}
	}
}

// TestOpenAPILimits: the caps the document states are those package
// production enforces.
func TestOpenAPILimits(t *testing.T) {
	_, d := loadOpenAPIFile(t)
	for _, c := range []struct {
		ref, keyword string
		want         int
	}{
		{"#/components/schemas/ProductionInput/properties/chapters", "maxItems", production.MaxChapters},
		{"#/components/schemas/ProductionInput/properties/output_files", "maxItems", production.MaxOutputFiles},
		{"#/components/schemas/ProductionInput/properties/multi_input_files", "maxItems", production.MaxMultiInputFiles},
		{"#/components/schemas/MultiInputFileInput/properties/offset", "maximum", production.MaxOffset},
		{"#/components/schemas/ChapterInput/properties/start", "maximum", production.MaxTimestampSeconds},
		{"#/components/schemas/Segment/properties/start", "maximum", production.MaxSegmentSeconds},
		{"#/components/schemas/Segment/properties/stop", "maximum", production.MaxSegmentSeconds},
		{"#/components/schemas/Algorithms/properties/segments", "maxItems", production.MaxSegments},
	} {
		s, err := d.resolve(c.ref)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := s.(map[string]any)[c.keyword].(json.Number)
		if n, err := got.Int64(); err != nil || n != int64(c.want) {
			t.Errorf("%s %s = %q, want %d", c.ref, c.keyword, got, c.want)
		}
	}
	paths, _ := d.root["paths"].(map[string]any)
	for path, want := range map[string]int{
		"/api/production/{uuid}/chapters.json":          production.MaxChapters,
		"/api/production/{uuid}/output_files.json":      production.MaxOutputFiles,
		"/api/production/{uuid}/multi_input_files.json": production.MaxMultiInputFiles,
		"/api/preset/{uuid}/output_files.json":          production.MaxOutputFiles,
		"/api/preset/{uuid}/multi_input_files.json":     production.MaxMultiInputFiles,
	} {
		op, _ := paths[path].(map[string]any)["post"].(map[string]any)
		body := get(op, "requestBody.content.application/json.schema.maxItems")
		if n, ok := body.(json.Number); !ok || n.String() != strconv.Itoa(want) {
			t.Errorf("POST %s: maxItems %v, want %d", path, body, want)
		}
	}
}
