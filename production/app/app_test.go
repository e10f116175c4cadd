package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testdb"
	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// env is an App over an SQLite store and a blob folder, with users ann
// and bob.
type env struct {
	app      *app.App
	store    *sqlstore.Store
	ann, bob storage.User
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	st := testdb.SQLite(t, filepath.Join(dir, "db"))
	b, err := blob.OpenDir(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	a, err := app.New(app.Config{Store: st, Blobs: b, BaseURL: "http://127.0.0.1:8080/ap"})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{app: a, store: st}
	if e.ann, err = a.CreateUser(t.Context(), "ann", "", "ann's password"); err != nil {
		t.Fatal(err)
	}
	if e.bob, err = a.CreateUser(t.Context(), "bob", "", "bob's password"); err != nil {
		t.Fatal(err)
	}
	return e
}

func decode(t *testing.T, body string) *production.Input {
	t.Helper()
	in, err := production.DecodeInput([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestProductionLifecycle: each operation keeps to its owner and to the
// state machine, and a start queues exactly one job.
func TestProductionLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	p, err := e.app.CreateProduction(ctx, e.ann, decode(t, `{"metadata": {"title": "Ep 1"}, "output_files": [{"format": "mp3"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != production.StatusIncomplete {
		t.Errorf("new production without input: %v", p.Status)
	}
	if _, err := e.app.GetProduction(ctx, e.bob, p.UUID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("bob reads ann's production: %v", err)
	}
	if _, err := e.app.UpdateProduction(ctx, e.bob, p.UUID, decode(t, `{"metadata": {"title": "mine"}}`)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("bob changes ann's production: %v", err)
	}
	if _, err := e.app.StartProduction(ctx, e.ann, p.UUID); !errors.Is(err, production.ErrNotStartable) {
		t.Errorf("start without input: %v", err)
	}
	// An input on a service that does not exist is a form error.
	_, err = e.app.UpdateProduction(ctx, e.ann, p.UUID, decode(t, `{"service": "nope", "input_file": "a.wav"}`))
	var fe production.FieldErrors
	if !errors.As(err, &fe) || fe["service"] != "no such service" {
		t.Errorf("unknown service: %v", err)
	}
	// A stored production whose input is known (as an upload leaves it)
	// starts once, whatever the number of starts.
	id := storage.NewUUID()
	q := &production.Production{UUID: id, Status: production.StatusNotStarted, InputFile: "in.wav", Length: 60,
		OutputFiles: []production.OutputFile{{Format: "mp3", Bitrate: 96}}}
	doc, err := production.EncodeDocument(q)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateResource(ctx, &storage.Resource{UUID: id, Owner: e.ann.ID, Kind: storage.KindProduction, Doc: doc, Status: int(q.Status)}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got, err := e.app.StartProduction(ctx, e.ann, id)
		if err != nil || got.Status != production.StatusWaiting {
			t.Fatalf("start: %v %v", got, err)
		}
	}
	jobs, err := e.store.ListJobs(ctx, e.ann.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, j := range jobs {
		if j.State == storage.JobQueued {
			live++
		}
	}
	if live != 1 {
		t.Errorf("%d queued jobs after two starts, want 1", live)
	}
	if err := e.app.DeleteProduction(ctx, e.bob, id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("bob deletes ann's production: %v", err)
	}
	got, err := e.app.StopProduction(ctx, e.ann, id)
	if err != nil || got.Status != production.StatusNotStarted {
		t.Fatalf("stop while waiting: %v %v", got, err)
	}
	if _, err := e.app.StopProduction(ctx, e.ann, id); !errors.Is(err, production.ErrNotRunning) {
		t.Errorf("stop of a stopped production: %v", err)
	}
	if err := e.app.DeleteProduction(ctx, e.ann, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.GetProduction(ctx, e.ann, id); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

// TestPresetLookup: a production names its owner's presets only, and a
// store that fails while looking one up is no client error.
func TestPresetLookup(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	pin, err := presetInput(`{"preset_name": "Weekly", "algorithms": {"loudnesstarget": -19}}`)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := e.app.CreatePreset(ctx, e.ann, pin)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.app.CreateProduction(ctx, e.ann, decode(t, `{"preset": "`+pr.UUID+`"}`))
	if err != nil || p.Settings().Int("loudnesstarget") != -19 {
		t.Fatalf("from ann's preset: %v %v", p, err)
	}
	_, err = e.app.CreateProduction(ctx, e.bob, decode(t, `{"preset": "`+pr.UUID+`"}`))
	var fe production.FieldErrors
	if !errors.As(err, &fe) || fe["preset"] != "no such preset" {
		t.Errorf("bob names ann's preset: %v", err)
	}
	e.store.Close()
	_, err = e.app.CreateProduction(context.Background(), e.ann, decode(t, `{"preset": "`+pr.UUID+`"}`))
	if err == nil || errors.As(err, &fe) {
		t.Errorf("a failing store: %v, want a server error", err)
	}
}

// TestWarnProduction: a warning after processing (a webhook that failed)
// lands on a finished production, once, and leaves one that is being
// processed again alone.
func TestWarnProduction(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	p := &production.Production{UUID: storage.NewUUID(), Status: production.StatusDone}
	p.SetWarning(production.StatusAudioProcessing, "input is clipped")
	doc, err := production.EncodeDocument(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.CreateResource(ctx, &storage.Resource{UUID: p.UUID, Owner: e.ann.ID, Kind: storage.KindProduction, Doc: doc, Status: int(p.Status)}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := e.app.WarnProduction(ctx, e.ann.ID, p.UUID, "webhook to https://h.example/x not delivered: HTTP 410"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := e.app.GetProduction(ctx, e.ann, p.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.WarningMessage != "input is clipped; webhook to https://h.example/x not delivered: HTTP 410" ||
		got.WarningStatus == nil || *got.WarningStatus != production.StatusDone || got.Status != production.StatusDone {
		t.Errorf("warning %q at %v, status %v", got.WarningMessage, got.WarningStatus, got.Status)
	}
	if err := e.store.SetStatus(ctx, e.ann.ID, storage.KindProduction, p.UUID, int(production.StatusAudioEncoding)); err != nil {
		t.Fatal(err)
	}
	if err := e.app.WarnProduction(ctx, e.ann.ID, p.UUID, "webhook failed again"); err != nil {
		t.Fatal(err)
	}
	if got, _ := e.app.GetProduction(ctx, e.ann, p.UUID); strings.Contains(got.WarningMessage, "again") {
		t.Errorf("a production being processed got the warning: %q", got.WarningMessage)
	}
	if err := e.app.WarnProduction(ctx, e.ann.ID, "gone", "x"); err == nil {
		t.Error("a warning on a missing production succeeded")
	}
}

// TestTakeRequest runs two Apps on two connections to one database, as
// two API processes would: they draw from one bucket per user.
func TestTakeRequest(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	var apps [2]*app.App
	for i := range apps {
		st, err := sqlstore.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if apps[i], err = app.New(app.Config{Store: st}); err != nil {
			t.Fatal(err)
		}
	}
	lim := app.RateLimit{Rate: 2, Burst: 4}
	take := func(i int, user string, now time.Time) (time.Duration, bool) {
		t.Helper()
		wait, ok, err := apps[i%2].TakeRequest(ctx, storage.User{ID: user}, lim, now)
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	now := time.Unix(1000, 0)
	for i := range 4 {
		if _, ok := take(i, "u", now); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	for i := range 2 {
		if wait, ok := take(i, "u", now); ok || wait <= 0 || wait > time.Second {
			t.Fatalf("process %d over the shared burst: ok %v wait %v", i, ok, wait)
		}
	}
	if _, ok := take(0, "v", now); !ok {
		t.Fatal("another user is limited by u's bucket")
	}
	now = now.Add(500 * time.Millisecond) // one unit leaks at 2/s
	if _, ok := take(1, "u", now); !ok {
		t.Fatal("the leaked unit was refused")
	}
	if wait, ok := take(0, "u", now); ok || wait <= 0 || wait > time.Second {
		t.Fatalf("second request after 0.5 s: ok %v wait %v", ok, wait)
	}
}

func presetInput(body string) (*preset.Input, error) { return preset.DecodeInput([]byte(body)) }

// TestLogOutEverywhere: every session of the user ends, another user's
// stays, and the user's API keys still open the API.
func TestLogOutEverywhere(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	now := time.Now()
	for _, u := range []storage.User{e.ann, e.bob} {
		s := &storage.Session{Hash: storage.HashToken("session of " + u.Username), User: u.ID, CSRF: "csrf", CredentialVersion: u.CredentialVersion, Expires: now.Add(time.Hour)}
		if err := e.store.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	_, key, err := e.app.CreateAPIKey(ctx, e.ann, "laptop", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.app.LogOutEverywhere(ctx, e.ann); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.LookupSession(ctx, storage.HashToken("session of ann"), now); err == nil {
		t.Error("ann's session is still accepted")
	}
	if _, err := e.store.LookupSession(ctx, storage.HashToken("session of bob"), now); err != nil {
		t.Errorf("bob's session ended with ann's: %v", err)
	}
	if _, err := e.store.LookupAPIKey(ctx, storage.HashToken(key), now); err != nil {
		t.Errorf("ann's API key no longer opens the API: %v", err)
	}
}

// TestPasswordIterations: newEnv's users are hashed at the default count;
// Config.PasswordIterations lowers it (not below 1000), and such a hash
// verifies like any other.
func TestPasswordIterations(t *testing.T) {
	e := newEnv(t)
	if want := "$" + strconv.Itoa(storage.PasswordIterations) + "$"; !strings.Contains(e.ann.PasswordHash, want) {
		t.Errorf("default hash %q lacks %q", e.ann.PasswordHash, want)
	}
	if _, err := app.New(app.Config{Store: e.store, PasswordIterations: 999}); err == nil {
		t.Error("999 iterations accepted")
	}
	a, err := app.New(app.Config{Store: e.store, PasswordIterations: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SetPassword(t.Context(), "bob", "bob's new password"); err != nil {
		t.Fatal(err)
	}
	bob, err := a.UserByName(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bob.PasswordHash, "$1000$") || !storage.CheckPassword(bob.PasswordHash, "bob's new password") {
		t.Errorf("hash at 1000 iterations %q does not verify", bob.PasswordHash)
	}
}
