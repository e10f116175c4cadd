package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/outbound"
)

// Live streams: the handlers decode, call livestream.Service and encode.
//
//	GET    /api/livestreams.json              list
//	POST   /api/livestreams.json              create (source, destinations, preset or algorithms)
//	GET    /api/livestream/{uuid}.json        one stream
//	DELETE /api/livestream/{uuid}.json        stop and delete
//	POST   /api/livestream/{uuid}/start.json  start
//	POST   /api/livestream/{uuid}/stop.json   stop
//	GET    /api/livestream/{uuid}/status.json the stream with its latest figures

func (s *server) liveRoutes(handle func(string, methods)) {
	handle("/api/livestreams.json", methods{"GET": s.listLiveStreams, "POST": s.createLiveStream})
	handle("/api/livestream/{file}", methods{"GET": s.getLiveStream, "DELETE": s.deleteLiveStream})
	handle("/api/livestream/{uuid}/{cmd}", methods{"GET": s.liveStreamQuery, "POST": s.liveStreamCommand})
}

// liveURLCheck returns the default outbound policy of live streams, the
// fetcher's (transport/outbound) when it has one: every address a
// stream's host resolves to must pass it (public only, by default).
// ffmpeg connects by itself, so the check is made when the stream is
// stored.
func liveURLCheck(policy outbound.Config) func(ctx context.Context, raw string) error {
	return func(ctx context.Context, raw string) error { return checkLiveURL(ctx, policy, raw) }
}

func checkLiveURL(ctx context.Context, policy outbound.Config, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
		return fmt.Errorf("cannot resolve %s", host)
	}
	for _, a := range addrs {
		if err := policy.Check(a); err != nil {
			return errors.New("this server does not connect to " + a.String() + ": " + err.Error())
		}
	}
	return nil
}

func (s *server) listLiveStreams(w http.ResponseWriter, r *http.Request, u storage.User) error {
	lp, err := parseList(r)
	if err != nil {
		return err
	}
	list, err := s.live.List(r.Context(), u.ID, lp.limit, lp.offset)
	if err != nil {
		return err
	}
	ok(w, list)
	return nil
}

func (s *server) createLiveStream(w http.ResponseWriter, r *http.Request, u storage.User) error {
	body, err := s.readJSON(w, r)
	if err != nil {
		return err
	}
	var in livestream.Input
	if err := json.Unmarshal(body, &in); err != nil {
		return newError(http.StatusBadRequest, CodeMalformedJSON, "the body is not a live stream: "+err.Error())
	}
	ls, err := s.live.Create(r.Context(), u.ID, in)
	if err != nil {
		return err
	}
	ok(w, ls)
	return nil
}

func (s *server) getLiveStream(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return errNotFound
	}
	ls, err := s.live.Get(r.Context(), u.ID, id)
	if err != nil {
		return err
	}
	ok(w, ls)
	return nil
}

func (s *server) deleteLiveStream(w http.ResponseWriter, r *http.Request, u storage.User) error {
	id, okName := jsonName(r, "file")
	if !okName {
		return errNotFound
	}
	if err := s.live.Delete(r.Context(), u.ID, id); err != nil {
		return err
	}
	ok(w, map[string]string{"uuid": id})
	return nil
}

func (s *server) liveStreamQuery(w http.ResponseWriter, r *http.Request, u storage.User) error {
	if cmd, _ := jsonName(r, "cmd"); cmd != "status" {
		return errNotFound
	}
	rep, err := s.live.Report(r.Context(), u.ID, r.PathValue("uuid"))
	if err != nil {
		return err
	}
	ok(w, rep)
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
		ls, err = s.live.Start(r.Context(), u.ID, id)
	case "stop":
		ls, err = s.live.Stop(r.Context(), u.ID, id)
	default:
		return errNotFound
	}
	if errors.Is(err, livestream.ErrState) {
		return newError(http.StatusConflict, CodeStartNotAllowed, err.Error())
	}
	if err != nil {
		return err
	}
	ok(w, ls)
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
	ls, err := pg.s.live.Get(r.Context(), pr.user.ID, r.PathValue("uuid"))
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
	rep, err := pg.s.live.Report(r.Context(), pr.user.ID, r.PathValue("uuid"))
	if err != nil {
		pg.s.writeError(w, r, err)
		return
	}
	ok(w, rep)
}
