package webpages

import (
	"net/http"

	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// The in-browser pages (package transport/browser), which audiopost
// serve serves at {base}/browser/, process a recording in the user's
// browser; on a server they offer the user's presets. They ask for them
// with the browser's session:
//
//	GET {base}/presets.json   {"user", "presets": [the API's preset objects], "links": {productions, upload, account}}
//
// Without a session (or a bearer token) it answers 401 in the envelope,
// and the pages offer their built-in presets only.

// browserPresets serves GET {base}/presets.json.
func (pg *pages) browserPresets(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	presets, err := pg.app.ListPresets(r.Context(), pr.user, maxPagePresets, 0)
	if err != nil {
		pg.writeError(w, r, err)
		return
	}
	links := map[string]string{
		"productions": pg.link(pr, pg.prefix+"/productions/"),
		"upload":      pg.link(pr, pg.prefix+"/upload/"),
	}
	if pr.bearer == "" {
		links["account"] = pg.prefix + "/account/"
	}
	w.Header().Set("Cache-Control", "no-store")
	envelope.OK(w, map[string]any{"user": pr.user.Username, "presets": presets, "links": links})
}
