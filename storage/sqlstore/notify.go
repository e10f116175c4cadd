package sqlstore

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Topics of Store.Subscribe.
const (
	// TopicJobs: a job became ready (enqueued, released by a worker that
	// shut down, or failed and queued for a retry).
	TopicJobs = "jobs"
	// TopicDeliveries: a webhook delivery was enqueued.
	TopicDeliveries = "deliveries"
	// TopicCanceled: jobs were canceled (a production stopped or
	// deleted); the workers running them should notice now rather than
	// at their next heartbeat.
	TopicCanceled = "canceled"
)

// topics are every topic, for a listener that must assume it missed some.
var topics = []string{TopicJobs, TopicDeliveries, TopicCanceled}

// pgChannel is the PostgreSQL NOTIFY channel of a topic. Notifications are
// scoped to one database, so installations on one server stay apart.
func pgChannel(topic string) string { return "audiopost_" + topic }

// hub calls the subscribers of a topic.
type hub struct {
	mu   sync.Mutex
	next int
	subs map[string]map[int]func()
}

func (h *hub) add(topic string, fn func()) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[string]map[int]func(){}
	}
	if h.subs[topic] == nil {
		h.subs[topic] = map[int]func(){}
	}
	id := h.next
	h.next++
	h.subs[topic][id] = fn
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[topic], id)
	}
}

func (h *hub) fire(topic string) {
	h.mu.Lock()
	fns := make([]func(), 0, len(h.subs[topic]))
	for _, fn := range h.subs[topic] {
		fns = append(fns, fn)
	}
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Subscribe calls fn whenever work of topic (TopicJobs, TopicDeliveries)
// may have become ready, so that an idle worker looks at once instead of
// at its next poll, or (TopicCanceled) jobs were canceled, so that the
// worker running one stops it at once:
//
//   - right after this Store committed a change that made some ready (the
//     embedded deployment: the API and the runner share one Store);
//   - on PostgreSQL, also after such a commit by any process on the same
//     database (LISTEN/NOTIFY on a connection of its own), and whenever
//     that connection was lost and made again, since notifications may
//     have been missed meanwhile.
//
// fn must not block; a runner's or a sender's Wake, or a runner's
// CheckLeases, fits. Subscribe is a
// shortcut, not a guarantee: a job whose RunAt comes or whose lease runs
// out sends no signal, so workers keep polling. The returned function
// unsubscribes.
func (s *Store) Subscribe(topic string, fn func()) (unsubscribe func()) {
	remove := s.hub.add(topic, fn)
	if s.pgDSN != "" {
		s.listenOnce.Do(func() {
			ctx, cancel := context.WithCancel(context.Background())
			s.stopListen = cancel
			s.listening.Add(1)
			go func() {
				defer s.listening.Done()
				s.listen(ctx)
			}()
		})
	}
	return remove
}

// ListenRetry bounds the delay between attempts to reconnect the
// PostgreSQL listener.
const ListenRetry = 5 * time.Second

// listen holds a PostgreSQL connection LISTENing on every topic's channel
// until ctx is done, reconnecting after failures.
func (s *Store) listen(ctx context.Context) {
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		if s.listenConn(ctx) {
			backoff = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, ListenRetry)
	}
}

// listenConn runs one listening connection until it fails, and reports
// whether it got as far as listening.
func (s *Store) listenConn(ctx context.Context) bool {
	conn, err := pgx.Connect(ctx, s.pgDSN)
	if err != nil {
		return false
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, t := range topics {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{pgChannel(t)}.Sanitize()); err != nil {
			return false
		}
	}
	if s.onListen != nil {
		s.onListen()
	}
	// Whatever was committed while no connection listened is lost: let
	// every subscriber look once.
	for _, t := range topics {
		s.hub.fire(t)
	}
	byChannel := map[string]string{}
	for _, t := range topics {
		byChannel[pgChannel(t)] = t
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true
		}
		if t, ok := byChannel[n.Channel]; ok {
			s.hub.fire(t)
		}
	}
}

// ready records that the repository's write made work of topic ready (or,
// for TopicCanceled, canceled some).
// On PostgreSQL it sends the NOTIFY on the same connection, so that it is
// delivered when (and only if) the transaction commits; subscribers of
// this Store are called after the commit (see Store.inTx), or at once
// outside of a transaction.
func (r *repo) ready(ctx context.Context, topic string) error {
	if r.d.notify != "" {
		if _, err := r.w.ExecContext(ctx, r.d.notify, pgChannel(topic)); err != nil {
			return r.wrap("notify "+topic, err)
		}
	}
	switch {
	case r.pending != nil:
		r.pending[topic] = true
	case r.hub != nil:
		r.hub.fire(topic)
	}
	return nil
}
