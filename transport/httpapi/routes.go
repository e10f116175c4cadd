package httpapi

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/auth"
	"github.com/audiopost/audiopost/transport/internal/envelope"
	"github.com/audiopost/audiopost/transport/webpages"
)

// apiHandler serves one authenticated API request; a returned error is
// rendered in the envelope by writeError.
type apiHandler func(w http.ResponseWriter, r *http.Request, u storage.User) error

// methods maps HTTP methods to the handler of one path.
type methods map[string]apiHandler

// routes builds the complete handler. Every API path is registered once
// per method plus once without a method, which answers 405 in the
// envelope; unknown paths under /api/ answer 404 in the envelope.
func (s *server) routes() http.Handler {
	api := http.NewServeMux()
	handle := func(path string, ms methods) {
		full := s.prefix + path
		allow := make([]string, 0, len(ms))
		for m, h := range ms {
			allow = append(allow, m)
			api.Handle(m+" "+full, s.serve(h))
		}
		slices.Sort(allow)
		s.ops.record(path, allow)
		api.HandleFunc(full, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeError(w, r, envelope.New(http.StatusMethodNotAllowed, CodeMethodNotAllowed, r.Method+" is not allowed here; use "+strings.Join(allow, " or ")))
		})
	}

	// Collections (adapt.go has the shapes of the handlers).
	productionUUID := func(p *production.Production) string { return p.UUID }
	presetUUID := func(pr *preset.Preset) string { return pr.UUID }
	handle("/api/productions.json", methods{
		"GET":  listed(s.app.ListProductions, s.productionView, productionUUID, func(p *production.Production) any { return s.minimalProduction(p) }),
		"POST": created(s, production.DecodeInput, s.app.CreateProduction, s.productionView)})
	handle("/api/presets.json", methods{
		"GET":  listed(s.app.ListPresets, same, presetUUID, func(pr *preset.Preset) any { return minimalPresetOf(pr) }),
		"POST": created(s, preset.DecodeInput, s.app.CreatePreset, same)})
	handle("/api/simple/productions.json", methods{"POST": s.simpleCreate})

	// One resource: {uuid}.json. ServeMux wildcards are whole segments, so
	// the handlers strip the .json suffix themselves.
	handle("/api/production/{file}", methods{"GET": s.getProduction,
		"POST": changed(s, production.DecodeInput, s.app.UpdateProduction, s.productionView), "DELETE": s.deleteResource(storage.KindProduction)})
	handle("/api/preset/{file}", methods{"GET": named(s.app.GetPreset, same),
		"POST": changed(s, preset.DecodeInput, s.app.UpdatePreset, same), "DELETE": s.deleteResource(storage.KindPreset)})
	// Sub-commands: {uuid}/{command}.json.
	handle("/api/production/{uuid}/{cmd}", methods{"GET": s.productionQuery, "POST": s.productionCommand,
		"DELETE": clearedList(s.app.ClearProductionList, s.productionView)})
	handle("/api/preset/{uuid}/{cmd}", methods{"POST": s.presetCommand, "DELETE": clearedList(s.app.ClearPresetList, same)})

	// Live streams (live.go).
	s.liveRoutes(handle)

	// Services, info, user.
	handle("/api/services.json", methods{"GET": s.listServices, "POST": created(s, decodeServiceInput, s.app.CreateService, serviceJSON)})
	// A delete leaves the productions and presets that name the service
	// their reference; their transfers to it fail with "the service no
	// longer exists".
	handle("/api/service/{file}", methods{"GET": named(s.app.GetService, serviceJSON), "POST": s.updateService, "DELETE": deleted(s.app.DeleteService)})
	handle("/api/service/{uuid}/{cmd}", methods{"GET": s.serviceLs, "POST": s.serviceCommand})
	handle("/api/info.json", methods{"GET": s.info})
	handle("/api/info/{what}", methods{"GET": s.infoOne})
	handle("/api/user.json", methods{"GET": s.user})

	// Downloads.
	handle("/api/download/{kind}/{uuid}/{name...}", methods{"GET": s.download})

	api.HandleFunc(s.prefix+"/api/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, envelope.New(http.StatusNotFound, CodeNotFound, "no such API endpoint: "+r.URL.Path))
	})

	top := http.NewServeMux()
	s.auth.Routes(top, s.prefix)
	top.Handle(s.prefix+"/api/", s.auth.Middleware(s.rateLimit(api)))
	// The info calls describe the service, not an account: like the
	// hosted service's, their GETs answer without credentials (other
	// methods fall through to the authenticated mux and its 405).
	top.Handle("GET "+s.prefix+"/api/info.json", s.servePublic(s.info))
	top.Handle("GET "+s.prefix+"/api/info/{what}", s.servePublic(s.infoOne))
	s.opsRoutes(top)
	webpages.Register(top, webpages.Config{App: s.app, Auth: s.auth, Base: s.base, Prefix: s.prefix,
		MaxBodyBytes: s.maxBody, MaxUploadBytes: s.maxUp, Logger: s.log,
		ProductionView: s.productionView, Download: s.download, Status: s.productionQuery})
	return s.instrument(top, api)
}

// serve adapts an apiHandler: it takes the user the auth middleware put
// in the context and renders returned errors.
func (s *server) serve(h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := auth.UserFrom(r.Context())
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="audiopost"`)
			s.writeError(w, r, envelope.New(http.StatusUnauthorized, CodeUnauthorized, "authentication required"))
			return
		}
		if err := h(w, r, u); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// servePublic adapts a handler that needs no account; it runs with the
// zero User.
func (s *server) servePublic(h apiHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r, storage.User{}); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// rateLimit answers 429 when the authenticated user exceeds the limit. A
// store that cannot count lets the request through: the limit protects the
// service from a client, not the client from a failing store (the request
// itself reports that), and the failure is logged.
func (s *server) rateLimit(next http.Handler) http.Handler {
	if s.rate.Rate <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, ok := auth.UserFrom(r.Context()); ok {
			wait, allowed, err := s.app.TakeRequest(r.Context(), u, s.rate, s.now())
			if err != nil {
				s.log.Error("rate limit: counting a request failed", "user", u.ID, "err", err)
			} else if !allowed {
				secs := strconv.Itoa(int(max(1, math.Ceil(wait.Seconds()))))
				w.Header().Set("Retry-After", secs)
				s.writeError(w, r, envelope.New(http.StatusTooManyRequests, CodeRateLimited, "too many requests; retry after "+secs+" s"))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// jsonName returns the name of a "{name}.json" path segment.
func jsonName(r *http.Request, wildcard string) (string, bool) {
	v := r.PathValue(wildcard)
	name, ok := strings.CutSuffix(v, ".json")
	return name, ok && name != ""
}
