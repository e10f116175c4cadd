package sqlstore

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/storage/sqlstore/pgtest"
)

// TestMain stops the PostgreSQL test server that the postgres engine
// starts on first use.
func TestMain(m *testing.M) { pgtest.Main(m) }

// engine is a database engine the store's test suite runs on.
type engine struct {
	name string
	// dsn returns the DSN of a new, empty database, removed when the test
	// ends.
	dsn func(t testing.TB) string
}

var engines = []engine{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "test.db") }},
	{"postgres", pgtest.DSN},
}

// eachEngine runs test once per engine, as subtests named after them.
func eachEngine(t *testing.T, test func(t *testing.T, e engine)) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { test(t, e) })
	}
}

// eachEngineSerial is eachEngine for a test that calls the store from one
// goroutine, where the store starts none of its own (only Subscribe
// does): the race detector has nothing to watch there, so CI's race run
// skips it and the plain run checks it. The race run keeps the tests
// with concurrency (claims, subscriptions, concurrent opens, credits,
// throttles, transactions), each of which opened a new store on both
// engines (a SQLite migration costs 0.3 s of CPU under -race).
func eachEngineSerial(t *testing.T, test func(t *testing.T, e engine)) {
	t.Helper()
	oneGoroutine(t)
	eachEngine(t, test)
}

// oneGoroutine skips a test of the store called from one goroutine under
// the race detector (see eachEngineSerial).
func oneGoroutine(t *testing.T) {
	t.Helper()
	testsize.SkipRace(t, "one goroutine, checked by the plain run; the race run checks the store's concurrency")
}

// open opens a store on a new database and returns it with its DSN, for
// opening it a second time (another process, in effect).
func (e engine) open(t testing.TB) (*Store, string) {
	t.Helper()
	dsn := e.dsn(t)
	st, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dsn
}

// tableExists reports whether the store's database has the table.
func tableExists(t testing.TB, st *Store, name string) bool {
	t.Helper()
	q := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`
	if st.Engine() == "postgres" {
		q = `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1`
	}
	var n int
	if err := st.wdb.QueryRowContext(t.Context(), q, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// fakeClock is a store clock that moves only when told: lease and retry
// tests advance it instead of sleeping.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

// newFakeClock makes st's clock a fake one, starting now.
func newFakeClock(st *Store) *fakeClock {
	c := &fakeClock{t: time.Now()}
	st.clock = c.Now
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
