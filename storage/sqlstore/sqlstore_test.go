package sqlstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// openTest opens a store on a new SQLite file.
func openTest(t *testing.T) (*Store, string) {
	t.Helper()
	return engines[0].open(t)
}

func mkUser(t *testing.T, st storage.Users, name string) storage.User {
	t.Helper()
	u := storage.User{Username: name, Email: name + "@example.org", PasswordHash: "x"}
	if err := st.CreateUser(t.Context(), &u); err != nil {
		t.Fatal(err)
	}
	return u
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want %v", err, target)
	}
}

func TestOpenDSNForms(t *testing.T) {
	oneGoroutine(t)
	ctx := t.Context()
	dir := t.TempDir()
	for _, dsn := range []string{
		filepath.Join(dir, "plain.db"),
		"sqlite://" + filepath.Join(dir, "url.db"), // sqlite:///abs/path
		"sqlite:" + filepath.Join(dir, "short.db"),
		filepath.Join(dir, "extra.db") + "?_pragma=cache_size(-4096)",
		":memory:",
	} {
		st, err := Open(ctx, dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		u := mkUser(t, st, "a")
		if got, err := st.GetUser(ctx, u.ID); err != nil || got.Username != "a" {
			t.Errorf("%s: read back %+v, %v", dsn, got, err)
		}
		st.Close()
	}
	// Nothing listens on port 1: the error says so, without the password.
	if _, err := Open(ctx, "postgres://u:hunter2@127.0.0.1:1/none?connect_timeout=5"); err == nil ||
		!strings.Contains(err.Error(), "postgres") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("postgres server not running: %v, want a connection error without the password", err)
	}
	if _, err := Open(ctx, "file:/x.db"); err == nil {
		t.Error("file: URI accepted")
	}
}

func TestSQLitePragmas(t *testing.T) {
	oneGoroutine(t)
	st, _ := openTest(t)
	ctx := t.Context()
	var mode string
	var fk, busy int
	if err := st.wdb.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v", mode, err)
	}
	for _, db := range []*struct {
		name string
		q    conn
	}{{"writer", st.wdb}, {"reader", st.rdb}} {
		if err := db.q.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
			t.Errorf("%s: foreign_keys %d, %v", db.name, fk, err)
		}
		if err := db.q.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil || busy != int(BusyTimeout.Milliseconds()) {
			t.Errorf("%s: busy_timeout %d, %v", db.name, busy, err)
		}
	}
	// The read pool must not be able to write: all writes go through the
	// single writer connection.
	if _, err := st.rdb.ExecContext(ctx, "DELETE FROM users"); err == nil {
		t.Error("read pool accepted a write")
	}
}

func TestMigrationsIdempotent(t *testing.T) { eachEngineSerial(t, testMigrationsIdempotent) }

func testMigrationsIdempotent(t *testing.T, e engine) {
	ctx := t.Context()
	st, dsn := e.open(t)
	u := mkUser(t, st, "keep")
	st.Close()
	for range 3 {
		st, err := Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var n, v int
		if err := st.wdb.QueryRowContext(ctx, "SELECT COUNT(*), MAX(version) FROM schema_migrations").Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		if n != len(migrations) || v != SchemaVersion {
			t.Errorf("schema_migrations has %d rows up to %d, want %d up to %d", n, v, len(migrations), SchemaVersion)
		}
		if _, err := st.GetUser(ctx, u.ID); err != nil {
			t.Errorf("data lost on reopen: %v", err)
		}
		st.Close()
	}

	// A new migration applies once, on top of the existing schema.
	st2, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	more := append(migrations[:len(migrations):len(migrations)],
		migration{SchemaVersion + 1, "test column", []string{`ALTER TABLE users ADD COLUMN nickname TEXT`}})
	for run, want := range []int{1, 0} {
		n, err := migrate(ctx, st2.wdb, st2.d, more, 1)
		if err != nil || n != want {
			t.Fatalf("run %d: applied %d, %v; want %d", run, n, err, want)
		}
	}
	// A failing migration leaves nothing half-applied.
	bad := append(more[:len(more):len(more)], migration{SchemaVersion + 2, "broken", []string{
		`CREATE TABLE half (x INTEGER)`, `THIS IS NOT SQL`}})
	if _, err := migrate(ctx, st2.wdb, st2.d, bad, 1); err == nil {
		t.Fatal("broken migration succeeded")
	}
	if tableExists(t, st2, "half") {
		t.Error("failed migration left table half behind")
	}
	// The program refuses a database from its future.
	st2.Close()
	if _, err := Open(ctx, dsn); !errors.Is(err, storage.ErrSchemaTooNew) {
		t.Errorf("open newer schema: %v, want ErrSchemaTooNew", err)
	}
}

func TestConcurrentOpen(t *testing.T) { eachEngine(t, testConcurrentOpen) }

func testConcurrentOpen(t *testing.T, e engine) {
	// Several processes starting at once on a fresh file must not apply a
	// migration twice; separate Stores stand in for the processes.
	dsn := e.dsn(t)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			st, err := Open(t.Context(), dsn)
			if err == nil {
				st.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestUsers(t *testing.T) { eachEngineSerial(t, testUsers) }

func testUsers(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	a := mkUser(t, st, "alice")
	if a.ID == "" || a.Joined.IsZero() {
		t.Fatalf("CreateUser did not assign id and joined: %+v", a)
	}
	got, err := st.GetUser(ctx, a.ID)
	if err != nil || got != a {
		t.Fatalf("GetUser = %+v, %v; want %+v", got, err, a)
	}
	if got, err := st.GetUserByUsername(ctx, "alice"); err != nil || got.ID != a.ID {
		t.Errorf("by username: %+v, %v", got, err)
	}
	if got, err := st.GetUserByEmail(ctx, "alice@example.org"); err != nil || got.ID != a.ID {
		t.Errorf("by email: %+v, %v", got, err)
	}
	_, err = st.GetUserByUsername(ctx, "nobody")
	wantErr(t, err, storage.ErrNotFound)
	_, err = st.GetUserByEmail(ctx, "")
	wantErr(t, err, storage.ErrNotFound)

	dup := storage.User{Username: "alice"}
	wantErr(t, st.CreateUser(ctx, &dup), storage.ErrConflict)
	dupMail := storage.User{Username: "alice2", Email: "alice@example.org"}
	wantErr(t, st.CreateUser(ctx, &dupMail), storage.ErrConflict)
	// Empty emails do not collide with each other.
	for _, n := range []string{"e1", "e2"} {
		u := storage.User{Username: n}
		if err := st.CreateUser(ctx, &u); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, st.CreateUser(ctx, &storage.User{}), storage.ErrInvalid)

	a.Username, a.Email, a.NotifyEmail, a.LowCreditsThreshold = "alicia", "", true, 2*time.Hour
	a.RechargeCredits, a.RechargeDate = 10*time.Hour, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a.OnetimeCredits = 99 * time.Hour // must be ignored: balances change only through Credits
	if err := st.UpdateUser(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, _ = st.GetUser(ctx, a.ID)
	a.OnetimeCredits = 0
	if got != a {
		t.Errorf("after update %+v, want %+v", got, a)
	}
	wantErr(t, st.UpdateUser(ctx, storage.User{ID: "missing", Username: "x"}), storage.ErrNotFound)

	list, err := st.ListUsers(ctx, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Username != "e1" || list[1].Username != "e2" {
		t.Errorf("ListUsers(2, 1) = %v", usernames(list))
	}

	// Deleting a user deletes what the user owns.
	res := storage.Resource{Owner: a.ID, Kind: storage.KindProduction}
	if err := st.CreateResource(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteUser(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	_, err = st.GetResource(ctx, a.ID, storage.KindProduction, res.UUID)
	wantErr(t, err, storage.ErrNotFound)
	wantErr(t, st.DeleteUser(ctx, a.ID), storage.ErrNotFound)
}

func usernames(us []storage.User) []string {
	var s []string
	for _, u := range us {
		s = append(s, u.Username)
	}
	return s
}

func TestCredits(t *testing.T) { eachEngine(t, testCredits) }

func testCredits(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	u := mkUser(t, st, "c")
	u, err := st.AddCredits(ctx, u.ID, 2*time.Hour, 1*time.Hour)
	if err != nil || u.OnetimeCredits != 2*time.Hour || u.RecurringCredits != time.Hour {
		t.Fatalf("AddCredits: %+v, %v", u, err)
	}
	// Recurring credits go first, the rest comes from one-time credits.
	u, err = st.Charge(ctx, u.ID, 90*time.Minute)
	if err != nil || u.RecurringCredits != 0 || u.OnetimeCredits != 90*time.Minute {
		t.Fatalf("Charge 90m: recurring %v onetime %v, %v", u.RecurringCredits, u.OnetimeCredits, err)
	}
	// Too much: refused, nothing charged.
	u, err = st.Charge(ctx, u.ID, 91*time.Minute)
	wantErr(t, err, storage.ErrInsufficientCredits)
	if u.Credits() != 90*time.Minute {
		t.Errorf("refused charge changed balance to %v", u.Credits())
	}
	_, err = st.Charge(ctx, "nobody", time.Minute)
	wantErr(t, err, storage.ErrNotFound)
	_, err = st.Charge(ctx, u.ID, -time.Minute)
	wantErr(t, err, storage.ErrInvalid)
	u, err = st.AddCredits(ctx, u.ID, -10*time.Hour, 0)
	if err != nil || u.Credits() != 0 {
		t.Errorf("removing more than the balance: %v, %v; want 0", u.Credits(), err)
	}

	// Concurrent charges never overdraw: 5h of credits, 12 charges of 1h.
	st.AddCredits(ctx, u.ID, 3*time.Hour, 2*time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, refused := 0, 0
	for range 12 {
		wg.Go(func() {
			_, err := st.Charge(ctx, u.ID, time.Hour)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, storage.ErrInsufficientCredits):
				refused++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	u, _ = st.GetUser(ctx, u.ID)
	if ok != 5 || refused != 7 || u.Credits() != 0 {
		t.Errorf("%d charges passed, %d refused, %v left; want 5, 7, 0", ok, refused, u.Credits())
	}
}

func TestAPIKeys(t *testing.T) { eachEngineSerial(t, testAPIKeys) }

func testAPIKeys(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	a, b := mkUser(t, st, "a"), mkUser(t, st, "b")
	secret := storage.NewToken()
	k := storage.APIKey{User: a.ID, Name: "ci", Hash: storage.HashToken(secret)}
	if err := st.CreateAPIKey(ctx, &k); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	got, err := st.LookupAPIKey(ctx, storage.HashToken(secret), t0)
	if err != nil || got.ID != k.ID || got.User != a.ID {
		t.Fatalf("lookup: %+v, %v", got, err)
	}
	if got, _ := st.ListAPIKeys(ctx, a.ID); len(got) != 1 || got[0].LastUsed.IsZero() {
		t.Errorf("last use not recorded: %+v", got)
	}
	// Within a minute a lookup does not write again.
	first := got.LastUsed
	st.LookupAPIKey(ctx, storage.HashToken(secret), t0.Add(30*time.Second))
	if got, _ := st.ListAPIKeys(ctx, a.ID); !got[0].LastUsed.Equal(first) {
		t.Errorf("last use rewritten within a minute: %v -> %v", first, got[0].LastUsed)
	}
	st.LookupAPIKey(ctx, storage.HashToken(secret), t0.Add(2*time.Minute))
	if got, _ := st.ListAPIKeys(ctx, a.ID); !got[0].LastUsed.After(first) {
		t.Errorf("last use not advanced after two minutes: %v", got[0].LastUsed)
	}

	_, err = st.LookupAPIKey(ctx, storage.HashToken("wrong"), t0)
	wantErr(t, err, storage.ErrNotFound)
	dup := storage.APIKey{User: b.ID, Name: "dup", Hash: k.Hash}
	wantErr(t, st.CreateAPIKey(ctx, &dup), storage.ErrConflict)

	exp := storage.APIKey{User: a.ID, Name: "short", Hash: storage.HashToken("s2"), Expires: t0.Add(time.Hour)}
	if err := st.CreateAPIKey(ctx, &exp); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LookupAPIKey(ctx, exp.Hash, t0.Add(59*time.Minute)); err != nil {
		t.Errorf("before expiry: %v", err)
	}
	_, err = st.LookupAPIKey(ctx, exp.Hash, t0.Add(time.Hour))
	wantErr(t, err, storage.ErrExpired)

	// Only the owner revokes.
	wantErr(t, st.RevokeAPIKey(ctx, b.ID, k.ID), storage.ErrNotFound)
	if err := st.RevokeAPIKey(ctx, a.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	_, err = st.LookupAPIKey(ctx, k.Hash, t0)
	wantErr(t, err, storage.ErrRevoked)
	if keys, _ := st.ListAPIKeys(ctx, b.ID); len(keys) != 0 {
		t.Errorf("b sees %d keys of a", len(keys))
	}
	if keys, _ := st.ListAPIKeys(ctx, a.ID); len(keys) != 2 || keys[0].ID != exp.ID {
		t.Errorf("a's keys not newest first: %+v", keys)
	}
}

func TestResourcesScopingAndPaging(t *testing.T) { eachEngineSerial(t, testResourcesScopingAndPaging) }

func testResourcesScopingAndPaging(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	a, b := mkUser(t, st, "a"), mkUser(t, st, "b")
	var made []storage.Resource
	for i := range 25 {
		r := storage.Resource{Owner: a.ID, Kind: storage.KindProduction, Doc: fmt.Appendf(nil, `{"n":%d}`, i)}
		if err := st.CreateResource(ctx, &r); err != nil {
			t.Fatal(err)
		}
		made = append(made, r)
	}
	preset := storage.Resource{Owner: a.ID, Kind: storage.KindPreset, Doc: []byte(`{"preset_name":"p"}`)}
	if err := st.CreateResource(ctx, &preset); err != nil {
		t.Fatal(err)
	}

	// Newest first, pages of 10, no overlap, nothing missing.
	var seen []string
	for off := 0; ; off += 10 {
		page, err := st.ListResources(ctx, a.ID, storage.KindProduction, 10, off)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			seen = append(seen, r.UUID)
		}
	}
	if len(seen) != 25 {
		t.Fatalf("paging returned %d productions, want 25", len(seen))
	}
	for i, id := range seen {
		if want := made[24-i].UUID; id != want {
			t.Fatalf("position %d: %s, want %s (newest first)", i, id, want)
		}
	}
	if all, _ := st.ListResources(ctx, a.ID, storage.KindProduction, 0, 0); len(all) != 25 {
		t.Errorf("limit 0 listed %d, want all 25", len(all))
	}
	if ps, _ := st.ListResources(ctx, a.ID, storage.KindPreset, 10, 0); len(ps) != 1 || ps[0].UUID != preset.UUID {
		t.Errorf("presets list: %+v", ps)
	}

	// User b never sees or changes a's resources.
	r := made[3]
	if l, _ := st.ListResources(ctx, b.ID, storage.KindProduction, 10, 0); len(l) != 0 {
		t.Errorf("b lists %d of a's productions", len(l))
	}
	_, err := st.GetResource(ctx, b.ID, storage.KindProduction, r.UUID)
	wantErr(t, err, storage.ErrNotFound)
	foreign := r
	foreign.Owner = b.ID
	wantErr(t, st.UpdateResource(ctx, &foreign), storage.ErrNotFound)
	wantErr(t, st.SetStatus(ctx, b.ID, storage.KindProduction, r.UUID, 3), storage.ErrNotFound)
	wantErr(t, st.DeleteResource(ctx, b.ID, storage.KindProduction, r.UUID), storage.ErrNotFound)
	// Nor is a production a preset.
	_, err = st.GetResource(ctx, a.ID, storage.KindPreset, r.UUID)
	wantErr(t, err, storage.ErrNotFound)
	// b cannot take a's uuid either.
	steal := storage.Resource{UUID: r.UUID, Owner: b.ID, Kind: storage.KindProduction}
	wantErr(t, st.CreateResource(ctx, &steal), storage.ErrConflict)

	got, err := st.GetResource(ctx, a.ID, storage.KindProduction, r.UUID)
	if err != nil || string(got.Doc) != string(r.Doc) || got.Version != 1 || got.Status != 0 {
		t.Fatalf("a's production after b's attempts: %+v, %v", got, err)
	}

	// Optimistic concurrency: two editors start from version 1.
	e1, e2 := got, got
	e1.Doc, e1.Status = []byte(`{"edit":1}`), 1
	if err := st.UpdateResource(ctx, &e1); err != nil || e1.Version != 2 {
		t.Fatalf("first edit: %v (version %d)", err, e1.Version)
	}
	e2.Doc = []byte(`{"edit":2}`)
	wantErr(t, st.UpdateResource(ctx, &e2), storage.ErrConflict)
	if err := st.SetStatus(ctx, a.ID, storage.KindProduction, r.UUID, 4); err != nil {
		t.Fatal(err)
	}
	got, _ = st.GetResource(ctx, a.ID, storage.KindProduction, r.UUID)
	if string(got.Doc) != `{"edit":1}` || got.Status != 4 || got.Version != 3 || got.Changed.Before(got.Created) {
		t.Errorf("after edit and status: %+v", got)
	}
	// Progress is no change of the production: the version and change
	// time stay, and the next status change resets it.
	if err := st.SetProgress(ctx, a.ID, r.UUID, 42); err != nil {
		t.Fatal(err)
	}
	wantErr(t, st.SetProgress(ctx, b.ID, r.UUID, 43), storage.ErrNotFound)
	wantErr(t, st.SetProgress(ctx, a.ID, r.UUID, 101), storage.ErrInvalid)
	before := got
	got, _ = st.GetResource(ctx, a.ID, storage.KindProduction, r.UUID)
	if got.Progress != 42 || got.Version != before.Version || !got.Changed.Equal(before.Changed) {
		t.Errorf("after progress: %+v", got)
	}
	listed := 0
	all, _ := st.ListResources(ctx, a.ID, storage.KindProduction, 0, 0)
	for _, l := range all {
		if l.UUID == r.UUID {
			listed = l.Progress
		}
	}
	if listed != 42 {
		t.Errorf("the list has progress %d", listed)
	}
	if err := st.SetStatus(ctx, a.ID, storage.KindProduction, r.UUID, 5); err != nil {
		t.Fatal(err)
	}
	if got, _ = st.GetResource(ctx, a.ID, storage.KindProduction, r.UUID); got.Progress != 0 {
		t.Errorf("progress %d after a status change", got.Progress)
	}
	if err := st.DeleteResource(ctx, a.ID, storage.KindProduction, r.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = st.GetResource(ctx, a.ID, storage.KindProduction, r.UUID)
	wantErr(t, err, storage.ErrNotFound)
	wantErr(t, st.CreateResource(ctx, &storage.Resource{Owner: a.ID, Kind: "song"}), storage.ErrInvalid)
	_, err = st.ListResources(ctx, a.ID, storage.KindProduction, 10, -1)
	wantErr(t, err, storage.ErrInvalid)
}

func TestServices(t *testing.T) { eachEngineSerial(t, testServices) }

func testServices(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	a, b := mkUser(t, st, "a"), mkUser(t, st, "b")
	s1 := storage.Service{Owner: a.ID, Type: "ftp", DisplayName: "my ftp", Outgoing: true, Config: []byte(`{"host":"h"}`)}
	s2 := storage.Service{Owner: a.ID, Type: "s3", DisplayName: "bucket", Incoming: true}
	for _, s := range []*storage.Service{&s1, &s2} {
		if err := st.CreateService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.GetService(ctx, a.ID, s1.UUID)
	if err != nil || got.Type != "ftp" || !got.Outgoing || got.Incoming || string(got.Config) != `{"host":"h"}` {
		t.Fatalf("GetService: %+v, %v", got, err)
	}
	if l, _ := st.ListServices(ctx, a.ID); len(l) != 2 || l[0].UUID != s1.UUID || string(l[1].Config) != "{}" {
		t.Errorf("ListServices: %+v", l)
	}
	_, err = st.GetService(ctx, b.ID, s1.UUID)
	wantErr(t, err, storage.ErrNotFound)
	if l, _ := st.ListServices(ctx, b.ID); len(l) != 0 {
		t.Errorf("b lists a's services: %+v", l)
	}
	s1.DisplayName, s1.Incoming = "renamed", true
	if err := st.UpdateService(ctx, s1); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetService(ctx, a.ID, s1.UUID); got.DisplayName != "renamed" || !got.Incoming {
		t.Errorf("after update: %+v", got)
	}
	foreign := s1
	foreign.Owner = b.ID
	wantErr(t, st.UpdateService(ctx, foreign), storage.ErrNotFound)
	wantErr(t, st.DeleteService(ctx, b.ID, s1.UUID), storage.ErrNotFound)
	if err := st.DeleteService(ctx, a.ID, s1.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = st.GetService(ctx, a.ID, s1.UUID)
	wantErr(t, err, storage.ErrNotFound)
}

func TestWithTxIsAtomic(t *testing.T) { eachEngineSerial(t, testWithTxIsAtomic) }

func testWithTxIsAtomic(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	a := mkUser(t, st, "a")
	p := storage.Resource{Owner: a.ID, Kind: storage.KindProduction}
	if err := st.CreateResource(ctx, &p); err != nil {
		t.Fatal(err)
	}
	start := func(fail error) error {
		return st.WithTx(ctx, func(tx storage.Tx) error {
			if err := tx.SetStatus(ctx, a.ID, storage.KindProduction, p.UUID, 1); err != nil {
				return err
			}
			if err := tx.Enqueue(ctx, &storage.Job{Owner: a.ID, Production: p.UUID, Type: "process"}); err != nil {
				return err
			}
			// Reads inside the transaction see its own writes.
			if got, err := tx.GetResource(ctx, a.ID, storage.KindProduction, p.UUID); err != nil || got.Status != 1 {
				return fmt.Errorf("read own write: %+v, %v", got, err)
			}
			return fail
		})
	}
	boom := errors.New("boom")
	wantErr(t, start(boom), boom)
	got, _ := st.GetResource(ctx, a.ID, storage.KindProduction, p.UUID)
	jobs, _ := st.ListJobs(ctx, a.ID, p.UUID)
	if got.Status != 0 || len(jobs) != 0 {
		t.Fatalf("rolled back transaction left status %d and %d jobs", got.Status, len(jobs))
	}
	func() {
		defer func() { recover() }()
		st.WithTx(ctx, func(tx storage.Tx) error {
			tx.SetStatus(ctx, a.ID, storage.KindProduction, p.UUID, 9)
			panic("in tx")
		})
	}()
	if got, _ := st.GetResource(ctx, a.ID, storage.KindProduction, p.UUID); got.Status != 0 {
		t.Fatalf("panicking transaction committed status %d", got.Status)
	}
	if err := start(nil); err != nil {
		t.Fatal(err)
	}
	got, _ = st.GetResource(ctx, a.ID, storage.KindProduction, p.UUID)
	jobs, _ = st.ListJobs(ctx, a.ID, p.UUID)
	if got.Status != 1 || len(jobs) != 1 || jobs[0].State != storage.JobQueued {
		t.Fatalf("committed transaction: status %d, jobs %+v", got.Status, jobs)
	}
	// A write inside the transaction failing with a sentinel surfaces it.
	err := st.WithTx(ctx, func(tx storage.Tx) error {
		return tx.SetStatus(ctx, "someone else", storage.KindProduction, p.UUID, 2)
	})
	wantErr(t, err, storage.ErrNotFound)
}

func TestRebindDollar(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                           "SELECT 1",
		"a = ? AND b = ?":                    "a = $1 AND b = $2",
		"x = '?' AND y = ? AND z = 'it''s?'": "x = '?' AND y = $1 AND z = 'it''s?'",
	} {
		if got := rebindDollar(in); got != want {
			t.Errorf("rebindDollar(%q) = %q, want %q", in, got, want)
		}
	}
	if q := postgresDialect.claimJob; !strings.Contains(q, "FOR UPDATE SKIP LOCKED") || !strings.Contains(q, "$5") || strings.Contains(q, "?") {
		t.Errorf("postgres claim query: %s", q)
	}
	if strings.Contains(sqliteDialect.claimJob, "SKIP LOCKED") || strings.Contains(sqliteDialect.claimJob, "%s") {
		t.Errorf("sqlite claim query: %s", sqliteDialect.claimJob)
	}
	if ddl := postgresDialect.ddl.Replace(strings.Join(migrations[0].stmts, ";")); strings.Contains(ddl, "{{") || strings.Contains(ddl, "AUTOINCREMENT") {
		t.Errorf("postgres DDL keeps SQLite types")
	}
}
