// Package sqlstore implements storage.Store on database/sql.
//
// SQLite (modernc.org/sqlite, pure Go, no cgo) is the embedded default: one
// file next to the blob folder, opened in WAL mode with foreign keys on and
// a busy timeout. Writes go through a pool of exactly one connection whose
// transactions begin IMMEDIATE, so writers in this process queue in Go
// instead of failing with SQLITE_BUSY, and writers in other processes wait
// up to the busy timeout; reads use a separate read-only pool and run
// concurrently with the writer.
//
// PostgreSQL (pgx, through database/sql) is the scale-out engine: any
// number of API and worker processes on any number of machines share one
// database. It has the same schema and behaviour; jobs and webhook
// deliveries are claimed with FOR UPDATE SKIP LOCKED, so concurrent
// workers pass over a row another one is taking instead of queueing
// behind it, and LISTEN/NOTIFY wakes idle workers in every process when
// work is committed (Store.Subscribe).
//
// Service credentials (storage.CredentialKeys) are sealed with the key
// SetSecretKey gives the store (AES-256-GCM, storage.SecretKey), in a
// column of their own; without a key the store refuses them.
//
// The schema is one set of numbered migrations, applied on Open inside a
// transaction and recorded in schema_migrations; on PostgreSQL the
// transaction first takes an advisory lock, so processes starting together
// apply each migration once, one after the other. Queries use "?"
// placeholders, rebound per dialect; the statements that differ between
// engines live in the dialect.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/audiopost/audiopost/storage"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"modernc.org/sqlite"               // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// BusyTimeout is how long an SQLite writer waits for another process's
// write transaction before giving up with "database is locked".
const BusyTimeout = 10 * time.Second

// Store is a storage.Store on an SQL database. It is safe for concurrent
// use by many goroutines, and several processes may open the same SQLite
// file or PostgreSQL database.
type Store struct {
	repo
	wdb, rdb *sql.DB
	hub      hub
	keys     keyRef

	// PostgreSQL listener (Subscribe).
	pgDSN      string
	listenOnce sync.Once
	stopListen context.CancelFunc
	listening  sync.WaitGroup
	onListen   func() // tests: called when the listener listens
}

var _ storage.Store = (*Store)(nil)

// Open opens (creating if needed) the database that dsn names and migrates
// it to the current schema. dsn is one of
//
//	sqlite:///abs/path/audiopost.db   (or sqlite:rel/path.db)
//	/abs/path/audiopost.db            (a plain path means SQLite)
//	:memory:                          (SQLite in memory, one connection; tests)
//	postgres://user:pass@host:port/db (or postgresql://; PostgreSQL)
//
// Extra SQLite connection parameters may follow a "?", as modernc.org/sqlite
// accepts them (e.g. "?_pragma=cache_size(-65536)"). A PostgreSQL URL takes
// the parameters pgx accepts (sslmode, host=/socket/dir, ...); a password
// may also come from the PGPASSWORD environment variable or ~/.pgpass.
func Open(ctx context.Context, dsn string) (*Store, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return openPostgres(ctx, dsn)
	case strings.HasPrefix(dsn, "sqlite:"):
		dsn = strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
	}
	return openSQLite(ctx, dsn)
}

func openSQLite(ctx context.Context, dsn string) (*Store, error) {
	path, extra, _ := strings.Cut(dsn, "?")
	if path == "" {
		return nil, fmt.Errorf("sqlstore: empty database path")
	}
	if strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlstore: %q: give a plain path, not a file: URI", dsn)
	}
	params := func(readOnly bool) string {
		p := []string{
			fmt.Sprintf("_pragma=busy_timeout(%d)", BusyTimeout.Milliseconds()),
			"_pragma=foreign_keys(1)",
			// NORMAL is durable across application crashes in WAL mode; only
			// an OS crash or power loss can lose the last transactions.
			"_pragma=synchronous(NORMAL)",
		}
		if readOnly {
			p = append(p, "_pragma=query_only(1)")
		} else {
			p = append(p, "_txlock=immediate")
		}
		if extra != "" {
			p = append(p, extra)
		}
		return path + "?" + strings.Join(p, "&")
	}
	wdb, err := sql.Open("sqlite", params(false))
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxIdleTime(0)
	wdb.SetConnMaxLifetime(0)
	s := &Store{wdb: wdb, rdb: wdb}
	if path != ":memory:" {
		// Every connection to :memory: is a database of its own, so an
		// in-memory store reads through its single writer connection.
		rdb, err := sql.Open("sqlite", params(true))
		if err != nil {
			wdb.Close()
			return nil, fmt.Errorf("sqlstore: open %s: %w", path, err)
		}
		rdb.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
		rdb.SetMaxIdleConns(max(4, runtime.GOMAXPROCS(0)))
		s.rdb = rdb
	}
	if err := s.init(ctx, sqliteDialect); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlstore: open %s: %w", path, err)
	}
	return s, nil
}

// PostgresConns bounds a Store's pool of PostgreSQL connections (the
// Subscribe listener holds one more). Every process has its own pool, so
// the server's max_connections must exceed the sum over all processes.
var PostgresConns = max(8, 2*runtime.GOMAXPROCS(0))

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: open postgres: %w", err)
	}
	db.SetMaxOpenConns(PostgresConns)
	db.SetMaxIdleConns(PostgresConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &Store{wdb: db, rdb: db, pgDSN: dsn}
	if err := s.init(ctx, postgresDialect); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlstore: open postgres: %w", redactDSN(err, dsn))
	}
	return s, nil
}

// redactDSN keeps a password in dsn out of an error message.
func redactDSN(err error, dsn string) error {
	u, perr := url.Parse(dsn)
	if perr != nil || u.User == nil {
		return err
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), pw, "xxxxx"))
}

// Engine names the database engine: "sqlite" or "postgres".
func (s *Store) Engine() string { return s.d.name }

func (s *Store) init(ctx context.Context, d *dialect) error {
	s.repo = repo{d: d, r: s.rdb, w: s.wdb, begin: s.inTx, hub: &s.hub, keys: &s.keys}
	if err := s.wdb.PingContext(ctx); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	if d == sqliteDialect {
		if err := setWAL(ctx, s.wdb); err != nil {
			return err
		}
	}
	_, err := migrate(ctx, s.wdb, d, migrations, now().UnixMicro())
	return err
}

// setWAL switches the database to write-ahead logging, where readers never
// block the writer. The mode is persistent, so only the first open of a
// fresh file changes anything. Changing it needs an exclusive lock and
// SQLite reports a competing opener as SQLITE_BUSY without calling the busy
// handler, hence the retry loop. The result must be checked: a database on
// a filesystem without shared memory silently stays in rollback mode.
func setWAL(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(BusyTimeout)
	for {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		switch {
		case err == nil && (mode == "wal" || mode == "memory"):
			return nil
		case err == nil:
			return fmt.Errorf("journal_mode is %q, want wal", mode)
		case !isBusy(err) || time.Now().After(deadline):
			return fmt.Errorf("set journal mode: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func isBusy(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}

// Close stops the listener of Subscribe and closes the database
// connections.
func (s *Store) Close() error {
	s.listenOnce.Do(func() {}) // no listener starts after this
	if s.stopListen != nil {
		s.stopListen()
		s.listening.Wait()
	}
	err := s.wdb.Close()
	if s.rdb != s.wdb {
		err = errors.Join(err, s.rdb.Close())
	}
	return err
}

// WithTx runs fn in one write transaction; see storage.Store.
//
// On SQLite write transactions run one at a time. PostgreSQL runs them
// concurrently (READ COMMITTED); to keep SQLite's behaviour, a read of one
// row by its key inside the transaction (GetUser, GetResource, GetService,
// GetJob) locks the row until the commit, so that transactions that read
// and then change the same row run one after the other, as they do on
// SQLite. Rows locked in different orders can deadlock; PostgreSQL then
// aborts one transaction, and WithTx runs fn again (up to MaxTxAttempts
// in all), so fn must not have effects outside the transaction that
// cannot be repeated.
func (s *Store) WithTx(ctx context.Context, fn func(tx storage.Tx) error) error {
	return s.inTx(ctx, func(r *repo) error { return fn(r) })
}

// MaxTxAttempts bounds how often a transaction aborted by a deadlock is
// run.
const MaxTxAttempts = 5

// inTx runs fn on a repo bound to a new write transaction, again when the
// database aborted it for a deadlock.
func (s *Store) inTx(ctx context.Context, fn func(r *repo) error) (err error) {
	for attempt := 1; ; attempt++ {
		err = s.tryTx(ctx, fn)
		if err == nil || attempt == MaxTxAttempts || !s.d.retryable(err) {
			return err
		}
		// Both transactions of a deadlock may be aborted, and retried at
		// once they meet again: wait a random while, longer each time,
		// so that one goes first.
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(1+rand.IntN(10*attempt)) * time.Millisecond):
		}
	}
}

func (s *Store) tryTx(ctx context.Context, fn func(r *repo) error) (err error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: begin: %w", err)
	}
	r := &repo{d: s.d, r: tx, w: tx, pending: map[string]bool{}, clock: s.clock, keys: &s.keys}
	r.begin = func(_ context.Context, fn func(*repo) error) error { return fn(r) }
	committed := false
	defer func() {
		if !committed {
			tx.Rollback()
		}
	}()
	if err := fn(r); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: commit: %w", err)
	}
	committed = true
	for topic := range r.pending {
		s.hub.fire(topic)
	}
	return nil
}

// conn is what the repositories need from *sql.DB and *sql.Tx.
type conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// repo implements every repository on a read and a write connection: the
// two pools of the Store, or one transaction for both.
type repo struct {
	d    *dialect
	r, w conn
	// begin runs fn in a write transaction: a new one on the Store, the
	// current one inside WithTx (nested work joins the outer transaction).
	begin func(ctx context.Context, fn func(r *repo) error) error
	// Where ready signals go: the Store's subscribers at once (hub), or,
	// inside a transaction, pending until it commits.
	hub     *hub
	pending map[string]bool
	// clock, when set, replaces time.Now (tests).
	clock func() time.Time
	// keys holds the Store's secret key for service credentials.
	keys *keyRef
}

// keyRef is the secret key of a Store, shared with its transactions.
type keyRef = atomic.Pointer[storage.SecretKey]

func (r *repo) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return r.w.ExecContext(ctx, r.d.rebind(q), args...)
}

// execOne runs a write that must touch exactly one row; none is ErrNotFound.
func (r *repo) execOne(ctx context.Context, what, q string, args ...any) error {
	res, err := r.exec(ctx, q, args...)
	if err != nil {
		return r.wrap(what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: %s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlstore: %s: %w", what, storage.ErrNotFound)
	}
	return nil
}

// lockRow is what a read of one row appends to lock it until the commit:
// inside a write transaction on PostgreSQL, " FOR UPDATE" (see WithTx).
func (r *repo) lockRow() string {
	if r.pending == nil {
		return ""
	}
	return r.d.lockRow
}

func (r *repo) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return r.r.QueryRowContext(ctx, r.d.rebind(q), args...)
}

func (r *repo) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return r.r.QueryContext(ctx, r.d.rebind(q), args...)
}

// wrap turns driver errors into storage sentinels where one fits.
func (r *repo) wrap(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlstore: %s: %w", what, storage.ErrNotFound)
	case r.d.isUnique(err):
		return fmt.Errorf("sqlstore: %s: %w (%v)", what, storage.ErrConflict, err)
	}
	return fmt.Errorf("sqlstore: %s: %w", what, err)
}

// now is the clock, truncated to what the database keeps so that values
// handed back to callers equal what a later read returns.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// now is the repository's clock: the Store's (tests set one), else now.
func (r *repo) now() time.Time {
	if r.clock != nil {
		return r.clock().UTC().Truncate(time.Microsecond)
	}
	return now()
}

// dbTime stores an instant; the zero time is NULL.
func dbTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// goTime reads an instant stored by dbTime.
func goTime(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMicro(v.Int64).UTC()
}

// dbText stores an optional string; "" is NULL.
func dbText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// dbBytes stores optional bytes; empty is NULL.
func dbBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// page validates limit and offset; limit <= 0 means no limit.
func page(limit, offset int) (int, int, error) {
	if offset < 0 {
		return 0, 0, fmt.Errorf("sqlstore: negative offset %d: %w", offset, storage.ErrInvalid)
	}
	if limit <= 0 {
		limit = math.MaxInt32 // LIMIT -1 is SQLite only
	}
	return limit, offset, nil
}
