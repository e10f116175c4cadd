package httpapi

import (
	"context"
	"net/http"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/envelope"
)

// The shapes most API handlers take, written once: the path's
// {file}.json (or {uuid}) names a resource of the user, the body decodes
// into an operation's input, the operation of production/app runs, and
// its result goes into the envelope in the view the API gives it.

// op is an operation on one resource of u.
type op[T any] func(ctx context.Context, u storage.User, id string) (T, error)

// same is the view of results the API encodes as they are.
func same[T any](v T) T { return v }

// named serves do on the resource the path's {file}.json names.
func named[T, V any](do op[T], view func(T) V) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, u storage.User) error {
		id, found := jsonName(r, "file")
		if !found {
			return envelope.ErrNotFound
		}
		v, err := do(r.Context(), u, id)
		return respond(w, view, v, err)
	}
}

// deleted serves a delete of the resource {file}.json names; the
// response is its uuid.
func deleted(del func(ctx context.Context, u storage.User, id string) error) apiHandler {
	return named(func(ctx context.Context, u storage.User, id string) (map[string]string, error) {
		return map[string]string{"uuid": id}, del(ctx, u, id)
	}, same)
}

// created serves an operation on the decoded body.
func created[In, T, V any](s *server, decode func([]byte) (In, error), do func(context.Context, storage.User, In) (T, error), view func(T) V) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, u storage.User) error {
		in, err := decodeBody(s, w, r, decode)
		if err != nil {
			return err
		}
		v, err := do(r.Context(), u, in)
		return respond(w, view, v, err)
	}
}

// changed serves an operation on the resource {file}.json names with the
// decoded body.
func changed[In, T, V any](s *server, decode func([]byte) (In, error), do func(context.Context, storage.User, string, In) (T, error), view func(T) V) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, u storage.User) error {
		id, found := jsonName(r, "file")
		if !found {
			return envelope.ErrNotFound
		}
		in, err := decodeBody(s, w, r, decode)
		if err != nil {
			return err
		}
		v, err := do(r.Context(), u, id, in)
		return respond(w, view, v, err)
	}
}

// listed serves a list of the user's resources: the uuids alone with
// uuids_only, their minimal form with minimal_data (when the kind has
// them), else their view.
func listed[T, V any](list func(ctx context.Context, u storage.User, limit, offset int) ([]T, error), view func(T) V, uuid func(T) string, minimal func(T) any) apiHandler {
	return func(w http.ResponseWriter, r *http.Request, u storage.User) error {
		lp, err := parseList(r)
		if err != nil {
			return err
		}
		vs, err := list(r.Context(), u, lp.limit, lp.offset)
		if err != nil {
			return err
		}
		out := make([]any, 0, len(vs))
		for _, v := range vs {
			switch {
			case lp.uuidsOnly && uuid != nil:
				out = append(out, uuid(v))
			case lp.minimal && minimal != nil:
				out = append(out, minimal(v))
			default:
				out = append(out, view(v))
			}
		}
		envelope.OK(w, out)
		return nil
	}
}

// decodeBody reads the JSON body and decodes it.
func decodeBody[In any](s *server, w http.ResponseWriter, r *http.Request, decode func([]byte) (In, error)) (In, error) {
	var in In
	body, err := s.readJSON(w, r)
	if err != nil {
		return in, err
	}
	if in, err = decode(body); err != nil {
		return in, envelope.DecodeError(err)
	}
	return in, nil
}

// respond encodes v's view, or returns the operation's error.
func respond[T, V any](w http.ResponseWriter, view func(T) V, v T, err error) error {
	if err != nil {
		return err
	}
	envelope.OK(w, view(v))
	return nil
}
