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
