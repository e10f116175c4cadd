package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testdb"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/transport/outbound"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openStore opens the store of an existing database, as a restart does.
func openStore(t *testing.T, path string) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func newStore(t *testing.T) (*sqlstore.Store, string) {
	t.Helper()
	st := testdb.SQLite(t, filepath.Join(t.TempDir(), "audiopost.db"))
	u := storage.User{Username: "alice"}
	if err := st.CreateUser(context.Background(), &u); err != nil {
		t.Fatal(err)
	}
	return st, u.ID
}

// received is one request as the receiver parsed it.
type received struct {
	mediaType string
	fields    url.Values
	at        time.Time
}

// receiver is a loopback webhook endpoint; respond picks the status of
// the n-th request (0-based) or blocks until the client gives up when it
// returns 0.
type receiver struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []received
	respond func(n int, r received) int
}

func newReceiver(t *testing.T, respond func(n int, r received) int) *receiver {
	t.Helper()
	rc := &receiver{respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		got := received{mediaType: mt, at: time.Now()}
		switch mt {
		case "multipart/form-data":
			if err := r.ParseMultipartForm(1 << 20); err == nil {
				got.fields = r.MultipartForm.Value
			}
		default:
			if err := r.ParseForm(); err == nil {
				got.fields = r.PostForm
			}
		}
		if r.Method != http.MethodPost {
			got.mediaType = "bad method " + r.Method
		}
		rc.mu.Lock()
		n := len(rc.reqs)
		rc.reqs = append(rc.reqs, got)
		rc.mu.Unlock()
		code := rc.respond(n, got)
		if code == 0 {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.reqs...)
}

func always(code int) func(int, received) int { return func(int, received) int { return code } }

var loopback = outbound.New(outbound.Config{AllowLoopback: true, Timeout: 10 * time.Second})

func testConfig(st storage.Deliveries) Config {
	return Config{
		Store:        st,
		Client:       loopback,
		Workers:      2,
		Timeout:      2 * time.Second,
		Lease:        5 * time.Second,
		BackoffBase:  50 * time.Millisecond,
		BackoffMax:   200 * time.Millisecond,
		PollInterval: 10 * time.Millisecond,
		Logger:       quiet,
	}
}

// start runs a sender until the test ends or the returned stop is called.
func start(t *testing.T, cfg Config) (stop func()) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func enqueue(t *testing.T, st storage.Store, owner, prod, rawURL string, status int, statusString string) int64 {
	t.Helper()
	err := st.WithTx(context.Background(), func(tx storage.Tx) error {
		return Enqueue(context.Background(), tx, owner, prod, rawURL, status, statusString)
	})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := st.ListDeliveries(context.Background(), owner, prod)
	if err != nil || len(ds) == 0 {
		t.Fatalf("delivery not stored: %v", err)
	}
	return ds[0].ID
}

// waitState waits until the delivery reaches a final state.
func waitState(t *testing.T, st storage.Deliveries, id int64, want storage.DeliveryState) storage.Delivery {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		d, err := st.GetDelivery(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if d.State == want {
			return d
		}
		if d.State != storage.DeliveryPending || time.Now().After(deadline) {
			t.Fatalf("delivery %d: state %s (attempts %d, last error %q), want %s", id, d.State, d.Attempts, d.LastError, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func checkFields(t *testing.T, r received, uuid, status, statusString string) {
	t.Helper()
	want := url.Values{"uuid": {uuid}, "status": {status}, "status_string": {statusString}}
	if fmt.Sprint(r.fields) != fmt.Sprint(want) {
		t.Errorf("%s fields %v, want %v", r.mediaType, r.fields, want)
	}
}

func TestFormEncodedDelivery(t *testing.T) {
	st, owner := newStore(t)
	rc := newReceiver(t, always(http.StatusOK))
	id := enqueue(t, st, owner, "p-1", rc.URL+"/hook?secret=1", 3, "Done")
	start(t, testConfig(st))
	d := waitState(t, st, id, storage.DeliveryDelivered)
	reqs := rc.requests()
	if len(reqs) != 1 || d.Attempts != 1 {
		t.Fatalf("%d requests, %d attempts, want 1 and 1", len(reqs), d.Attempts)
	}
	if reqs[0].mediaType != "application/x-www-form-urlencoded" {
		t.Errorf("content type %q", reqs[0].mediaType)
	}
	checkFields(t, reqs[0], "p-1", "3", "Done")
}

func TestMultipartAfterFormError(t *testing.T) {
	for _, code := range []int{400, 404, 500, 503} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			st, owner := newStore(t)
			rc := newReceiver(t, func(n int, r received) int {
				if r.mediaType == "multipart/form-data" {
					return http.StatusNoContent
				}
				return code
			})
			id := enqueue(t, st, owner, "p-2", rc.URL, 2, "Error")
			start(t, testConfig(st))
			d := waitState(t, st, id, storage.DeliveryDelivered)
			reqs := rc.requests()
			if len(reqs) != 2 || d.Attempts != 1 {
				t.Fatalf("%d requests, %d attempts, want 2 in one attempt", len(reqs), d.Attempts)
			}
			if reqs[0].mediaType != "application/x-www-form-urlencoded" || reqs[1].mediaType != "multipart/form-data" {
				t.Errorf("content types %q then %q", reqs[0].mediaType, reqs[1].mediaType)
			}
			checkFields(t, reqs[0], "p-2", "2", "Error")
			checkFields(t, reqs[1], "p-2", "2", "Error")
		})
	}
}

func TestMultipart4xxIsFinal(t *testing.T) {
	st, owner := newStore(t)
	rc := newReceiver(t, func(n int, r received) int {
		if r.mediaType == "multipart/form-data" {
			return http.StatusForbidden
		}
		return http.StatusInternalServerError
	})
	id := enqueue(t, st, owner, "p-3", rc.URL, 3, "Done")
	var mu sync.Mutex
	var told []string
	toldOnce := make(chan struct{}, 1)
	cfg := testConfig(st)
	cfg.OnFailed = func(_ context.Context, d storage.Delivery, msg string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, d.Production+": "+msg)
		select {
		case toldOnce <- struct{}{}:
		default:
		}
	}
	start(t, cfg)
	d := waitState(t, st, id, storage.DeliveryFailed)
	if d.Attempts != 1 || len(rc.requests()) != 2 || d.HTTPStatus != http.StatusForbidden {
		t.Errorf("attempts %d, requests %d, HTTP %d, want 1, 2 and 403", d.Attempts, len(rc.requests()), d.HTTPStatus)
	}
	if !strings.Contains(d.LastError, "HTTP 500") || !strings.Contains(d.LastError, "HTTP 403") || !strings.Contains(d.LastError, "rejected") {
		t.Errorf("last error %q", d.LastError)
	}
	// The owner is told once, which hook failed and why. The sender
	// calls OnFailed after the store has the delivery failed, so the
	// state above can be read before the call (the race run once did:
	// "OnFailed calls []"); 15 s is a guard against a hang only.
	select {
	case <-toldOnce:
	case <-time.After(15 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || !strings.HasPrefix(told[0], "p-3: webhook to "+rc.URL+" not delivered: ") || !strings.HasSuffix(told[0], d.LastError) {
		t.Errorf("OnFailed calls %q", told)
	}
}

func TestTimeoutRetriedWithBackoff(t *testing.T) {
	st, owner := newStore(t)
	rc := newReceiver(t, func(n int, r received) int {
		if n == 0 {
			return 0 // hang past the timeout
		}
		return http.StatusOK
	})
	rs := &reschedules{Deliveries: st}
	cfg := testConfig(rs)
	cfg.Timeout = 100 * time.Millisecond
	cfg.Lease = time.Second
	cfg.BackoffBase = 300 * time.Millisecond
	cfg.BackoffMax = time.Second
	cfg.Now = rs.now
	id := enqueue(t, st, owner, "p-4", rc.URL, 3, "Done")
	start(t, cfg)
	d := waitState(t, st, id, storage.DeliveryDelivered)
	reqs := rc.requests()
	if len(reqs) != 2 || d.Attempts != 2 {
		t.Fatalf("%d requests, %d attempts, want 2 and 2", len(reqs), d.Attempts)
	}
	// A timeout is retried later with the form encoding, not answered with
	// the multipart fallback.
	for _, r := range reqs {
		if r.mediaType != "application/x-www-form-urlencoded" {
			t.Errorf("request as %s", r.mediaType)
		}
	}
	// Equal jitter waits half the base to the whole of it after the
	// timeout, and the retry comes no earlier. The gap between the two
	// requests as the receiver saw them is no measure: the timeout runs
	// from before the first request arrived (CI once saw 247.7 ms against
	// 100+150 ms).
	rs.mu.Lock()
	waits := rs.waits
	rs.mu.Unlock()
	if len(waits) != 1 {
		t.Fatalf("%d reschedules, want 1", len(waits))
	}
	if w := waits[0]; w.next.Sub(w.at) < cfg.BackoffBase/2 || w.next.Sub(w.at) > cfg.BackoffBase {
		t.Errorf("rescheduled %v after the failure, want %v to %v", w.next.Sub(w.at), cfg.BackoffBase/2, cfg.BackoffBase)
	}
	// The store keeps microseconds.
	if next := waits[0].next.Truncate(time.Microsecond); reqs[1].at.Before(next) {
		t.Errorf("retried %v before it was due", next.Sub(reqs[1].at))
	}
	if gap := waits[0].at.Sub(reqs[0].at); gap > cfg.Timeout+time.Second {
		t.Errorf("failure recorded %v after the first request, want about the timeout %v", gap, cfg.Timeout)
	}
	if !strings.Contains(d.LastError, "no response within 100ms") || d.HTTPStatus != http.StatusOK {
		t.Errorf("last error %q, HTTP %d", d.LastError, d.HTTPStatus)
	}
}

// reschedules records when each retry was scheduled for and the
// sender's clock when it scheduled it (its now is the sender's Now).
type reschedules struct {
	storage.Deliveries
	mu    sync.Mutex
	last  time.Time
	waits []struct{ at, next time.Time }
}

func (r *reschedules) now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = time.Now()
	return r.last
}

func (r *reschedules) DeliveryFailed(ctx context.Context, d storage.Delivery, reason string, next time.Time) error {
	if !next.IsZero() {
		r.mu.Lock()
		r.waits = append(r.waits, struct{ at, next time.Time }{r.last, next})
		r.mu.Unlock()
	}
	return r.Deliveries.DeliveryFailed(ctx, d, reason, next)
}

func TestMultipart5xxRetriedThenGivesUp(t *testing.T) {
	st, owner := newStore(t)
	rc := newReceiver(t, always(http.StatusBadGateway))
	cfg := testConfig(st)
	cfg.MaxAttempts = 3
	id := enqueue(t, st, owner, "p-5", rc.URL, 3, "Done")
	start(t, cfg)
	d := waitState(t, st, id, storage.DeliveryFailed)
	if d.Attempts != 3 || len(rc.requests()) != 6 {
		t.Errorf("attempts %d, requests %d, want 3 and 6", d.Attempts, len(rc.requests()))
	}
	if !strings.Contains(d.LastError, "gave up after 3 attempts") || !strings.Contains(d.LastError, "HTTP 502") {
		t.Errorf("last error %q", d.LastError)
	}
}

// A sender stopped while a request is in flight reschedules the delivery;
// a new sender over a reopened store sends it, exactly once.
func TestRestartDeliversPendingOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audiopost.db")
	st := testdb.SQLite(t, path)
	u := storage.User{Username: "bob"}
	if err := st.CreateUser(context.Background(), &u); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ok := 0
	rc := newReceiver(t, func(n int, r received) int {
		if n == 0 {
			return 0 // in flight when the sender stops
		}
		mu.Lock()
		ok++
		mu.Unlock()
		return http.StatusOK
	})
	id := enqueue(t, st, u.ID, "p-6", rc.URL, 3, "Done")
	cfg := testConfig(st)
	cfg.Timeout = 10 * time.Second
	cfg.Lease = time.Minute // a crash would hide it this long; a clean stop must not
	stop := start(t, cfg)
	for len(rc.requests()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	d, err := st.GetDelivery(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if d.State != storage.DeliveryPending || !strings.Contains(d.LastError, "interrupted") {
		t.Fatalf("after stop: state %s, last error %q", d.State, d.LastError)
	}
	st.Close()

	st2 := openStore(t, path)
	defer st2.Close()
	cfg2 := testConfig(st2)
	cfg2.Workers = 4
	start(t, cfg2)
	waitState(t, st2, id, storage.DeliveryDelivered)
	time.Sleep(200 * time.Millisecond) // room for a duplicate to show up
	mu.Lock()
	defer mu.Unlock()
	if ok != 1 {
		t.Errorf("delivered %d times, want 1", ok)
	}
}

func TestForbiddenAddressFails(t *testing.T) {
	st, owner := newStore(t)
	rc := newReceiver(t, always(http.StatusOK))
	cfg := testConfig(st)
	cfg.Client = outbound.New(outbound.Config{}) // the production policy
	cases := map[string]string{
		"p-loop":  rc.URL + "/hook",
		"p-10":    "http://10.1.2.3/hook",
		"p-meta":  "http://169.254.169.254/latest/meta-data/",
		"p-ftp":   "ftp://example.com/hook",
		"p-rel":   "/relative",
		"p-local": strings.Replace(rc.URL, "127.0.0.1", "localhost", 1),
	}
	ids := map[string]int64{}
	for prod, u := range cases {
		ids[prod] = enqueue(t, st, owner, prod, u, 3, "Done")
	}
	start(t, cfg)
	for prod, id := range ids {
		d := waitState(t, st, id, storage.DeliveryFailed)
		if d.Attempts != 1 {
			t.Errorf("%s: %d attempts for a final refusal", prod, d.Attempts)
		}
		want := "refusing to connect"
		if prod == "p-ftp" || prod == "p-rel" {
			want = "absolute http or https"
		}
		if !strings.Contains(d.LastError, want) {
			t.Errorf("%s: last error %q, want it to say %q", prod, d.LastError, want)
		}
	}
	if n := len(rc.requests()); n != 0 {
		t.Errorf("refused webhooks reached the receiver %d times", n)
	}
}

func TestConcurrentWorkersDeliverEachOnce(t *testing.T) {
	st, owner := newStore(t)
	var mu sync.Mutex
	count := map[string]int{}
	rc := newReceiver(t, func(n int, r received) int {
		mu.Lock()
		count[r.fields.Get("uuid")]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		return http.StatusOK
	})
	const n = 40
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = enqueue(t, st, owner, fmt.Sprintf("p-%02d", i), rc.URL, 3, "Done")
	}
	cfg := testConfig(st)
	cfg.Workers = 4
	stop := start(t, cfg)
	for _, id := range ids {
		waitState(t, st, id, storage.DeliveryDelivered)
	}
	time.Sleep(100 * time.Millisecond)
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(count) != n {
		t.Errorf("%d productions notified, want %d", len(count), n)
	}
	for uuid, c := range count {
		if c != 1 {
			t.Errorf("%s notified %d times", uuid, c)
		}
	}
}

// TestReclaim: the claim of a sender of this host whose process is gone
// is taken back at once, not after its lease; a live sender's is not.
func TestReclaim(t *testing.T) {
	st, owner := newStore(t)
	ctx := context.Background()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	deadID := fmt.Sprintf("%s-%d-abcd/0", host, cmd.Process.Pid)
	liveID := fmt.Sprintf("%s-%d-abcd/0", host, os.Getppid())
	rc := newReceiver(t, always(http.StatusOK))
	ids := map[string]int64{}
	for _, w := range []string{deadID, liveID} {
		ids[w] = enqueue(t, st, owner, "p-"+w, rc.URL, 3, "Done")
		if _, err := st.ClaimDelivery(ctx, w, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(testConfig(st))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.Reclaim(ctx); n != 1 || err != nil {
		t.Fatalf("Reclaim = %d, %v; want 1", n, err)
	}
	start(t, testConfig(st))
	d := waitState(t, st, ids[deadID], storage.DeliveryDelivered)
	if d.Attempts != 2 || d.HTTPStatus != http.StatusOK {
		t.Errorf("taken back: %d attempts, HTTP %d; want 2 and 200", d.Attempts, d.HTTPStatus)
	}
	if d, _ := st.GetDelivery(ctx, ids[liveID]); d.State != storage.DeliveryPending || d.Worker != liveID {
		t.Errorf("a live sender's claim: %+v", d)
	}
}

func TestBackoff(t *testing.T) {
	s, err := New(Config{Store: nopDeliveries{}, BackoffBase: time.Second, BackoffMax: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		attempt int
		lo, hi  time.Duration
	}{
		{1, 500 * time.Millisecond, time.Second},
		{2, time.Second, 2 * time.Second},
		{3, 2 * time.Second, 4 * time.Second},
		{5, 5 * time.Second, 10 * time.Second},
		{1000, 5 * time.Second, 10 * time.Second},
	} {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := s.backoff(c.attempt)
			if d < c.lo || d > c.hi {
				t.Fatalf("backoff(%d) = %v, want in [%v, %v]", c.attempt, d, c.lo, c.hi)
			}
			seen[d] = true
		}
		if len(seen) < 100 {
			t.Errorf("backoff(%d) is barely jittered: %d distinct delays of 200", c.attempt, len(seen))
		}
	}
}

type nopDeliveries struct{ storage.Deliveries }

func TestNewChecksConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Error("New without a store succeeded")
	}
	if _, err := New(Config{Store: nopDeliveries{}, Timeout: time.Second, Lease: 2 * time.Second}); err == nil {
		t.Error("New with a lease shorter than two requests succeeded")
	}
}

func TestEnqueue(t *testing.T) {
	st, owner := newStore(t)
	ctx := context.Background()
	if err := Enqueue(ctx, st, owner, "p-7", "", 3, "Done"); err != nil {
		t.Errorf("no webhook: %v", err)
	}
	if err := Enqueue(ctx, st, owner, "", "http://example.com/", 3, "Done"); !errors.Is(err, storage.ErrInvalid) {
		t.Errorf("without uuid: %v", err)
	}
	// Rolled back with the status change: nothing to send.
	boom := errors.New("processing result not saved")
	err := st.WithTx(ctx, func(tx storage.Tx) error {
		if err := Enqueue(ctx, tx, owner, "p-7", "http://example.com/", 3, "Done"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if ds, err := st.ListDeliveries(ctx, owner, "p-7"); err != nil || len(ds) != 0 {
		t.Errorf("after rollback: %d deliveries, %v", len(ds), err)
	}
	want := url.Values{"uuid": {"p-7"}, "status": {"2"}, "status_string": {"Error"}}
	if got, err := url.ParseQuery(string(Payload("p-7", 2, "Error"))); err != nil || got.Encode() != want.Encode() {
		t.Errorf("Payload = %v, %v", got, err)
	}
}

func TestParseURL(t *testing.T) {
	for _, ok := range []string{"http://example.com/hook", "https://user:pw@example.com:8443/h?x=1"} {
		if _, err := ParseURL(ok); err != nil {
			t.Errorf("ParseURL(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "example.com/hook", "ftp://example.com/", "http://", "http://:80/", "http://[::1", "mailto:a@b"} {
		if _, err := ParseURL(bad); !errors.Is(err, ErrInvalidURL) {
			t.Errorf("ParseURL(%q) = %v", bad, err)
		}
	}
	if r := redact("https://u:p@example.com/h?token=s3cret"); strings.Contains(r, "s3cret") || strings.Contains(r, "u:p") {
		t.Errorf("redact kept a secret: %s", r)
	}
}
