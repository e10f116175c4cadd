package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// Live streams: the handlers decode, call the live stream operations of
// package production/app and encode.
//
//	GET    /api/livestreams.json              list
//	POST   /api/livestreams.json              create (source, destinations, preset or algorithms)
//	GET    /api/livestream/{uuid}.json        one stream
//	DELETE /api/livestream/{uuid}.json        stop and delete
//	POST   /api/livestream/{uuid}/start.json  start
//	POST   /api/livestream/{uuid}/stop.json   stop
//	GET    /api/livestream/{uuid}/status.json the stream with its latest figures

func (s *server) liveRoutes(handle func(string, methods)) {
	handle("/api/livestreams.json", methods{"GET": listed(s.app.ListLiveStreams, same, nil, nil),
		"POST": created(s, decodeLiveStream, s.app.CreateLiveStream, same)})
	handle("/api/livestream/{file}", methods{"GET": named(s.app.GetLiveStream, same), "DELETE": deleted(s.app.DeleteLiveStream)})
	handle("/api/livestream/{uuid}/{cmd}", methods{"GET": s.liveStreamQuery, "POST": s.liveStreamCommand})
}

// decodeLiveStream reads a live stream creation request.
func decodeLiveStream(body []byte) (livestream.Input, error) {
	var in livestream.Input
	if err := json.Unmarshal(body, &in); err != nil {
		return in, envelope.New(http.StatusBadRequest, CodeMalformedJSON, "the body is not a live stream: "+err.Error())
	}
	return in, nil
}

func (s *server) liveStreamQuery(w http.ResponseWriter, r *http.Request, u storage.User) error {
	if cmd, _ := jsonName(r, "cmd"); cmd != "status" {
		return envelope.ErrNotFound
	}
	rep, err := s.app.LiveStreamReport(r.Context(), u, r.PathValue("uuid"))
	if err != nil {
		return err
	}
	envelope.OK(w, rep)
	return nil
}

func (s *server) liveStreamCommand(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id := r.PathValue("uuid")
	var (
		ls  *livestream.LiveStream
		err error
	)
	switch cmd, _ := jsonName(r, "cmd"); cmd {
	case "start":
		ls, err = s.app.StartLiveStream(r.Context(), u, id)
	case "stop":
		ls, err = s.app.StopLiveStream(r.Context(), u, id)
	default:
		return envelope.ErrNotFound
	}
	if err != nil {
		return err
	}
	envelope.OK(w, ls)
	return nil
}

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
	ls, err := pg.s.app.GetLiveStream(r.Context(), pr.user, r.PathValue("uuid"))
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
		Warnings: ls.Warnings, Error: ls.Error, PollURL: pg.link(pr, pg.s.prefix+"/livestream/"+ls.UUID+"/status.json")}
	for _, dst := range ls.Destinations {
		v.Destinations = append(v.Destinations, livestream.Redact(dst.URL)+" ("+dst.Format+")")
	}
	d.Live = v
	pg.render(w, r, pr, http.StatusOK, "live", d)
}

// liveJSON is the page's poll: the status the API's status call returns.
func (pg *pages) liveJSON(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	rep, err := pg.s.app.LiveStreamReport(r.Context(), pr.user, r.PathValue("uuid"))
	if err != nil {
		pg.s.writeError(w, r, err)
		return
	}
	envelope.OK(w, rep)
}
