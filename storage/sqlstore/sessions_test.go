package sqlstore

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

func TestSessions(t *testing.T) { eachEngineSerial(t, testSessions) }

func testSessions(t *testing.T, e engine) {
	st, dsn := e.open(t)
	ctx := t.Context()
	clock := newFakeClock(st)
	u := mkUser(t, st, "ses")
	if u.CredentialVersion != 1 {
		t.Fatalf("new user at credential version %d, want 1", u.CredentialVersion)
	}
	now := clock.Now()
	s := storage.Session{Hash: storage.HashToken("a"), User: u.ID, CSRF: "c", Expires: now.Add(time.Hour)}
	if err := st.CreateSession(ctx, &s); err != nil {
		t.Fatal(err)
	}
	if s.CredentialVersion != 1 {
		t.Errorf("session bound to version %d", s.CredentialVersion)
	}
	// Another process on the same database sees it (PostgreSQL: another
	// API replica; SQLite: a restarted server).
	st2, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	got, err := st2.LookupSession(ctx, s.Hash, now)
	if err != nil || got.User != u.ID || got.CSRF != "c" {
		t.Fatalf("lookup from a second store: %+v, %v", got, err)
	}
	_, err = st.LookupSession(ctx, s.Hash, now.Add(time.Hour))
	wantErr(t, err, storage.ErrExpired)
	_, err = st.LookupSession(ctx, storage.HashToken("nope"), now)
	wantErr(t, err, storage.ErrNotFound)

	// A profile change keeps the session; a password change ends it, and
	// the user's OAuth tokens with it.
	c := storage.OAuthClient{Name: "app", Public: true}
	if err := st.CreateOAuthClient(ctx, &c); err != nil {
		t.Fatal(err)
	}
	tok := storage.OAuthToken{Hash: storage.HashToken("tok"), ClientID: c.ID, User: u.ID, Expires: now.Add(time.Hour)}
	if err := st.CreateOAuthToken(ctx, &tok); err != nil {
		t.Fatal(err)
	}
	u.NotifyEmail = true
	if err := st.UpdateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := st.LookupSession(ctx, s.Hash, now); err != nil {
		t.Fatalf("session after a profile change: %v", err)
	}
	u.PasswordHash = "new"
	if err := st.UpdateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	_, err = st2.LookupSession(ctx, s.Hash, now)
	wantErr(t, err, storage.ErrNotFound) // deleted with the version change
	_, err = st.LookupOAuthToken(ctx, tok.Hash, now)
	wantErr(t, err, storage.ErrRevoked)
	if u2, _ := st.GetUser(ctx, u.ID); u2.CredentialVersion != 2 {
		t.Errorf("credential version %d after a password change, want 2", u2.CredentialVersion)
	}

	// A session bound to an old version is revoked even if still stored.
	old := storage.Session{Hash: storage.HashToken("old"), User: u.ID, CSRF: "c", CredentialVersion: 1, Expires: now.Add(time.Hour)}
	if err := st.CreateSession(ctx, &old); err != nil {
		t.Fatal(err)
	}
	_, err = st.LookupSession(ctx, old.Hash, now)
	wantErr(t, err, storage.ErrRevoked)

	// Log out everywhere.
	s2 := storage.Session{Hash: storage.HashToken("b"), User: u.ID, CSRF: "c", Expires: now.Add(time.Hour)}
	if err := st.CreateSession(ctx, &s2); err != nil {
		t.Fatal(err)
	}
	u3, err := st.EndSessions(ctx, u.ID)
	if err != nil || u3.CredentialVersion != 3 {
		t.Fatalf("EndSessions: version %d, %v", u3.CredentialVersion, err)
	}
	_, err = st.LookupSession(ctx, s2.Hash, now)
	wantErr(t, err, storage.ErrNotFound)
	_, err = st.EndSessions(ctx, "nobody")
	wantErr(t, err, storage.ErrNotFound)

	// Expired sessions are deleted when a new one is made.
	s3 := storage.Session{Hash: storage.HashToken("c"), User: u.ID, CSRF: "c", Expires: now.Add(time.Minute)}
	if err := st.CreateSession(ctx, &s3); err != nil {
		t.Fatal(err)
	}
	clock.Advance(2 * time.Minute)
	s4 := storage.Session{Hash: storage.HashToken("d"), User: u.ID, CSRF: "c", Expires: clock.Now().Add(time.Minute)}
	if err := st.CreateSession(ctx, &s4); err != nil {
		t.Fatal(err)
	}
	_, err = st.LookupSession(ctx, s3.Hash, now)
	wantErr(t, err, storage.ErrNotFound)
	if err := st.DeleteSession(ctx, s4.Hash); err != nil {
		t.Fatal(err)
	}
	_, err = st.LookupSession(ctx, s4.Hash, clock.Now())
	wantErr(t, err, storage.ErrNotFound)
}

func TestThrottles(t *testing.T) { eachEngineSerial(t, testThrottles) }

func testThrottles(t *testing.T, e engine) {
	st, dsn := e.open(t)
	ctx := t.Context()
	st2, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	for i := range 4 {
		// Alternate between the two stores: one counter for both.
		s := st
		if i%2 == 1 {
			s = st2
		}
		if _, err := s.AddThrottle(ctx, "k", t0, time.Minute, 1, "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}
	th, err := st.AddThrottle(ctx, "k", t0.Add(90*time.Second), time.Minute, 1, "10.0.0.2")
	if err != nil || th.Level != 3.5 || th.Note != "10.0.0.2" {
		t.Fatalf("after 4 adds and 1.5 leaks, +1: %+v, %v", th, err)
	}
	m, err := st2.GetThrottles(ctx, "k", "missing")
	if err != nil || len(m) != 1 || m["k"].Level != 3.5 || !m["k"].At.Equal(t0.Add(90*time.Second)) {
		t.Fatalf("GetThrottles: %+v, %v", m, err)
	}
	if got := m["k"].LevelAt(t0.Add(10*time.Minute), time.Minute); got != 0 {
		t.Errorf("level after a long leak %v, want 0", got)
	}
	if n, err := st.PurgeThrottles(ctx, t0.Add(time.Minute)); err != nil || n != 0 {
		t.Errorf("purge of a fresh counter: %d, %v", n, err)
	}
	if n, err := st.PurgeThrottles(ctx, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("purge of an old counter: %d, %v", n, err)
	}
	if _, err := st.AddThrottle(ctx, "j", t0, 0, 2, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteThrottles(ctx, "j", "x"); err != nil {
		t.Fatal(err)
	}
	if m, _ := st.GetThrottles(ctx, "j"); len(m) != 0 {
		t.Errorf("deleted counter still there: %+v", m)
	}
}

func TestTakeThrottle(t *testing.T) { eachEngine(t, testTakeThrottle) }

// testTakeThrottle takes from one limited counter concurrently through two
// stores (two processes): exactly the limit is granted, and a leaked unit
// grants exactly one more.
func testTakeThrottle(t *testing.T, e engine) {
	st, dsn := e.open(t)
	ctx := t.Context()
	st2, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	t0 := time.Now().UTC().Truncate(time.Microsecond)
	const limit, tries = 4, 12
	var granted atomic.Int32
	var wg sync.WaitGroup
	for i := range tries {
		s := st
		if i%2 == 1 {
			s = st2
		}
		wg.Go(func() {
			_, ok, err := s.TakeThrottle(ctx, "api:u", t0, time.Second, 1, limit)
			if err != nil {
				t.Error(err)
			}
			if ok {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := granted.Load(); got != limit {
		t.Fatalf("%d concurrent takes of a limit of %d granted %d", tries, limit, got)
	}
	th, ok, err := st.TakeThrottle(ctx, "api:u", t0.Add(500*time.Millisecond), time.Second, 1, limit)
	if err != nil || ok || th.LevelAt(t0.Add(500*time.Millisecond), time.Second) != 3.5 {
		t.Fatalf("half a unit leaked: %+v ok=%v, %v; want refused at level 3.5", th, ok, err)
	}
	th, ok, err = st2.TakeThrottle(ctx, "api:u", t0.Add(time.Second), time.Second, 1, limit)
	if err != nil || !ok || th.Level != limit {
		t.Fatalf("a unit leaked: %+v ok=%v, %v; want granted at the limit", th, ok, err)
	}
	if _, ok, _ := st.TakeThrottle(ctx, "api:v", t0, time.Second, 5, limit); ok {
		t.Error("a take larger than the limit was granted")
	}
}

func TestExpireLeases(t *testing.T) { eachEngineSerial(t, testExpireLeases) }

func testExpireLeases(t *testing.T, e engine) {
	st, _ := e.open(t)
	ctx := t.Context()
	for range 3 {
		if err := st.Enqueue(ctx, &storage.Job{Type: "process"}); err != nil {
			t.Fatal(err)
		}
	}
	a1, _ := st.Claim(ctx, "dead", time.Hour)
	a2, _ := st.Claim(ctx, "dead", time.Hour)
	b, _ := st.Claim(ctx, "alive", time.Hour)
	holders, err := st.LeaseHolders(ctx)
	if err != nil || len(holders) != 2 || holders[0] != "alive" || holders[1] != "dead" {
		t.Fatalf("holders %q, %v", holders, err)
	}
	n, err := st.ExpireLeases(ctx, "dead")
	if err != nil || n != 2 {
		t.Fatalf("expired %d, %v", n, err)
	}
	got := map[int64]bool{}
	for range 2 {
		j, err := st.Claim(ctx, "new", time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if j.Attempts != 2 {
			t.Errorf("reclaimed job at attempt %d, want 2", j.Attempts)
		}
		got[j.ID] = true
	}
	if !got[a1.ID] || !got[a2.ID] {
		t.Errorf("reclaimed %v, want %d and %d", got, a1.ID, a2.ID)
	}
	if _, err := st.Claim(ctx, "new", time.Hour); err == nil {
		t.Error("the live worker's job was taken")
	}
	if err := st.Heartbeat(ctx, a1.Lease(), time.Hour); err == nil {
		t.Error("the dead worker's lease still beats")
	}
	if err := st.Heartbeat(ctx, b.Lease(), time.Hour); err != nil {
		t.Errorf("live worker: %v", err)
	}
}
