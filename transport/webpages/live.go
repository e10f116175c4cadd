package webpages

import (
	"net/http"

	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// liveView is the live stream page's data.
type liveView struct {
	UUID, Name, State, Source string
	Destinations              []string
	Warnings                  []string
	Error                     string
	PollURL                   string
}

// livePage shows a live stream with a meter that follows it as it plays:
// its loudness over the last minutes, gain and peaks, polled every second.
func (pg *pages) livePage(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	ls, err := pg.app.GetLiveStream(r.Context(), pr.user, r.PathValue("uuid"))
	if err != nil {
		pg.renderFailure(w, r, pr, err)
		return
	}
	title := ls.Name
	if title == "" {
		title = "Live stream"
	}
	d := pg.data(pr, title)
	v := &liveView{UUID: ls.UUID, Name: ls.Name, State: ls.State.String(), Source: livestream.Redact(ls.Source),
		Warnings: ls.Warnings, Error: ls.Error, PollURL: pg.link(pr, pg.prefix+"/livestream/"+ls.UUID+"/status.json")}
	for _, dst := range ls.Destinations {
		v.Destinations = append(v.Destinations, livestream.Redact(dst.URL)+" ("+dst.Format+")")
	}
	d.Live = v
	pg.render(w, r, pr, http.StatusOK, "live", d)
}

// liveJSON is the page's poll: the status the API's status call returns.
func (pg *pages) liveJSON(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	rep, err := pg.app.LiveStreamReport(r.Context(), pr.user, r.PathValue("uuid"))
	if err != nil {
		pg.writeError(w, r, err)
		return
	}
	envelope.OK(w, rep)
}
