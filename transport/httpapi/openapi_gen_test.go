package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// The parts of openapi.json that the tables of package production and
// this package define are generated: `go generate ./transport/httpapi`
// runs TestOpenAPIGenerated with -update, which rewrites them in place
// (and formats the whole file as json.MarshalIndent does). Without
// -update the test fails when the committed file differs.

const openAPIFile = "openapi.json"

// generatedFrom marks a generated schema for readers of the file.
const generatedFrom = "x-generated-from"

// generatedSchemas returns the schemas of components.schemas that come
// from tables.
func generatedSchemas(t *testing.T) map[string]any {
	t.Helper()
	out := map[string]any{}

	// Algorithms: one property per key of the table, with the union of
	// the options and scopes of its rows.
	var keys []string
	rows := map[string][]production.Algorithm{}
	for _, a := range production.AlgorithmTable() {
		if _, ok := rows[a.Key]; !ok {
			keys = append(keys, a.Key)
		}
		rows[a.Key] = append(rows[a.Key], a)
	}
	props := map[string]any{}
	for _, k := range keys {
		props[k] = algorithmSchema(rows[k])
	}
	const alias = "filtering"
	if c := production.CanonicalKey(alias); c != "hipfilter" {
		t.Fatalf("the alias %q is %q now; update the generator", alias, c)
	}
	props[alias] = map[string]any{"type": []any{"boolean", "null"}, "description": "Alias of hipfilter."}
	out["Algorithms"] = map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"properties":           props,
		"description": "Processing settings by algorithm key. Which keys apply depends on where the object is (x-scopes): " +
			"singletrack productions and presets, the mixdown of multitrack ones (multitrack_master), or a multitrack track " +
			"(multitrack_track, in multi_input_files). Requests may also send booleans as \"true\"/\"false\"/\"on\"/\"off\"/1/0 " +
			"and numbers as numeric strings; null resets a key to its default. Responses carry the keys that were set.",
		generatedFrom: "production.AlgorithmTable()",
	}
	out["AlgorithmKey"] = map[string]any{
		"type":        "string",
		"enum":        anySlice(keys),
		"description": "An algorithm key.",
		generatedFrom: "production.AlgorithmTable()",
	}

	// Output formats.
	var names []any
	var desc strings.Builder
	desc.WriteString("An output format:")
	for _, f := range production.OutputFormats() {
		names = append(names, f.Name)
		fmt.Fprintf(&desc, "\n- %s: %s (%s)", f.Name, f.DisplayName, f.Type)
		if len(f.Bitrates) > 0 {
			fmt.Fprintf(&desc, ", bitrates %s kbps, default %d", joinInts(f.Bitrates), f.DefaultBitrate)
		}
		if len(f.Endings) > 0 {
			fmt.Fprintf(&desc, ", endings %s", strings.Join(f.Endings, ", "))
		}
		if f.MultitrackOnly {
			desc.WriteString(", multitrack productions only")
		}
		if f.NeedsSpeech {
			desc.WriteString(", needs speech recognition")
		}
	}
	out["OutputFormatName"] = map[string]any{"type": "string", "enum": names, "description": desc.String(),
		generatedFrom: "production.OutputFormats()"}

	// Production statuses, by code.
	info := production.StatusInfo()
	codes := slices.SortedFunc(maps.Keys(info), func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	var enum []any
	desc.Reset()
	desc.WriteString("A production status code:")
	for _, c := range codes {
		n, err := strconv.Atoi(c)
		if err != nil {
			t.Fatal(err)
		}
		enum = append(enum, n)
		fmt.Fprintf(&desc, "\n- %d: %s", n, info[c])
	}
	out["ProductionStatus"] = map[string]any{"type": "integer", "enum": enum, "description": desc.String(),
		generatedFrom: "production.StatusInfo()"}

	// Service types.
	types := httpapi.ServiceTypes()
	desc.Reset()
	desc.WriteString("An external service type:")
	tnames := slices.Sorted(maps.Keys(types))
	for _, n := range tnames {
		fmt.Fprintf(&desc, "\n- %s: %s", n, types[n].DisplayName)
	}
	out["ServiceType"] = map[string]any{"type": "string", "enum": anySlice(tnames), "description": desc.String(),
		generatedFrom: "httpapi.ServiceTypes()"}

	// Subtitle styles.
	for _, s := range []struct {
		name, from string
		values     []string
	}{
		{"SubtitleFont", "production.SubtitleFonts", production.SubtitleFonts},
		{"SubtitleStyleMode", "production.SubtitleStyleModes", production.SubtitleStyleModes},
		{"SubtitleHAlign", "production.SubtitleHAligns", production.SubtitleHAligns},
		{"SubtitleVAlign", "production.SubtitleVAligns", production.SubtitleVAligns},
		{"SubtitleWordHighlight", "production.SubtitleWordHighlights", production.SubtitleWordHighlights},
	} {
		out[s.name] = map[string]any{"type": "string", "enum": anySlice(s.values), generatedFrom: s.from}
	}
	return out
}

// algorithmSchema is the schema of one key from its rows in the table.
func algorithmSchema(rows []production.Algorithm) map[string]any {
	a := rows[0]
	typ := map[production.ValueKind]string{production.KindBool: "boolean", production.KindInt: "integer",
		production.KindFloat: "number", production.KindString: "string", production.KindSegments: "array"}[a.Kind]
	s := map[string]any{"type": []any{typ, "null"}}
	var scopes production.Scope
	var options []any
	for _, r := range rows {
		scopes |= r.Scopes
		for _, o := range r.Options {
			if !slices.Contains(options, o.Value) {
				options = append(options, o.Value)
			}
		}
	}
	if len(options) > 0 {
		s["enum"] = append(options, nil)
	}
	if a.Kind == production.KindSegments {
		s["items"] = map[string]any{"$ref": "#/components/schemas/Segment"}
		s["maxItems"] = production.MaxSegments
	}
	d := a.DisplayName + ". " + a.Description
	if a.BelongsTo != "" {
		d += " Refines " + a.BelongsTo + "."
	}
	switch {
	case a.DefaultFrom != "":
		d += " Default: the value of " + a.DefaultFrom + "."
	case a.Default != nil:
		s["default"] = a.Default
	}
	for _, r := range rows[1:] {
		if r.Default != a.Default {
			d += fmt.Sprintf(" Default in %s: %v.", strings.Join(r.Scopes.Names(), ", "), r.Default)
		}
	}
	s["description"] = d
	s["x-scopes"] = anySlice(scopes.Names())
	return s
}

func anySlice[T any](v []T) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// decodeJSON decodes a document keeping numbers as written.
func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return m
}

// regenerate returns src with the generated schemas replaced, formatted.
func regenerate(t *testing.T, src []byte) []byte {
	t.Helper()
	doc := decodeJSON(t, src)
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	if schemas == nil {
		t.Fatal("openapi.json has no components.schemas")
	}
	maps.Copy(schemas, generatedSchemas(t))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOpenAPIGenerated checks that the generated parts of openapi.json
// are what the tables give now; with -update (go generate) it rewrites
// them.
func TestOpenAPIGenerated(t *testing.T) {
	src, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	got := regenerate(t, src)
	if *update {
		if !bytes.Equal(got, src) {
			if err := os.WriteFile(openAPIFile, got, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Log("rewrote " + openAPIFile)
		}
		return
	}
	if !bytes.Equal(got, src) {
		t.Fatalf("%s is stale or not formatted: the tables it is generated from changed; run go generate ./transport/httpapi (first difference at line %d)",
			openAPIFile, firstDiffLine(src, got))
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
