package httpapi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"
)

// openapi.json is the OpenAPI 3.1 document of the whole API, written by
// hand except for the parts generated from the tables of package
// production and this package (algorithm keys with their types, options
// and defaults, output formats, production statuses, service types),
// which `go generate` rewrites in place; TestOpenAPIGenerated fails when
// the committed file differs from what the tables give. Generating into
// the committed file, rather than merging the enums in at run time,
// keeps the repository's file the complete contract: reviewers see a
// table change as a change of the API, and client generators and linters
// can use the file without running a server. The file has no servers
// entry: the handler adds its BaseURL when serving it, and turns the
// OAuth endpoints' paths into URLs under it, the only parts that depend
// on the deployment.
//
//go:generate go test -run ^TestOpenAPIGenerated$ -update .
//go:embed openapi.json
var openAPISource []byte

// openAPIDoc is the document as one handler serves it.
type openAPIDoc struct {
	body []byte
	etag string
}

// openAPIFor returns the document with base as its server, built once on
// first use.
func openAPIFor(base string) func() (openAPIDoc, error) {
	return sync.OnceValues(func() (openAPIDoc, error) {
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(openAPISource))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return openAPIDoc{}, err
		}
		doc["servers"] = []any{map[string]any{"url": base, "description": "this audiopost server"}}
		// The OAuth endpoints' URLs in the file are absolute paths, right
		// for a server at the root only; under a base path they must be
		// absolute URLs.
		if flows, ok := dig(doc, "components", "securitySchemes", "oauth2", "flows").(map[string]any); ok {
			for _, f := range flows {
				f, _ := f.(map[string]any)
				for _, k := range []string{"authorizationUrl", "tokenUrl"} {
					if u, ok := f[k].(string); ok && strings.HasPrefix(u, "/") {
						f[k] = base + u
					}
				}
			}
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			return openAPIDoc{}, err
		}
		sum := sha256.Sum256(b.Bytes())
		return openAPIDoc{body: b.Bytes(), etag: `"` + hex.EncodeToString(sum[:12]) + `"`}, nil
	})
}

// dig returns the value at a path of object keys, or nil.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// serveOpenAPI: GET {base}/api/openapi.json, without credentials.
func (s *server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	doc, err := s.ops.openapi()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", doc.etag)
	// The document is public: let API tools on other origins load it.
	h.Set("Access-Control-Allow-Origin", "*")
	http.ServeContent(w, r, "openapi.json", time.Time{}, bytes.NewReader(doc.body))
}
