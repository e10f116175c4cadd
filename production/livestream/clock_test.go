package livestream_test

import (
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/audiopost/audiopost/production/livestream"
)

// simClock is simulated time that the test lets pass with Run: timers
// whose time comes fire in order, and the clock then reads the new time.
// A timer set (After, NewTimer, Reset) to fire within the limit Run set
// fires at once, moving the clock on to its time (never beyond the
// limit), and waits for the limit to be raised otherwise. A stream run on
// it does in an instant what takes the limit's time on a wall clock, and
// stops exactly there.
type simClock struct {
	mu      sync.Mutex
	now     time.Time
	limit   time.Time
	waiters []*simTimer
}

// simTimer is a simClock's timer, with time.Timer's semantics since Go
// 1.23: Reset and Stop take back a time it delivered that was not read.
type simTimer struct {
	c  *simClock
	at time.Time
	ch chan time.Time
}

func newSimClock() *simClock {
	t := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	return &simClock{now: t, limit: t}
}

func (c *simClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *simClock) After(d time.Duration) <-chan time.Time {
	return c.NewTimer(d).C()
}

func (c *simClock) NewTimer(d time.Duration) livestream.Timer {
	t := &simTimer{c: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

func (t *simTimer) C() <-chan time.Time { return t.ch }

func (t *simTimer) Reset(d time.Duration) {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	t.stop()
	t.at = c.now.Add(d)
	if !t.at.After(c.limit) {
		c.now = t.at
		t.ch <- t.at
		return
	}
	c.waiters = append(c.waiters, t)
}

func (t *simTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	return t.stop()
}

// stop takes t off the waiters and back what it delivered but was not
// read; it reports whether t was waiting. The clock's lock is held.
func (t *simTimer) stop() bool {
	select {
	case <-t.ch:
	default:
	}
	if i := slices.Index(t.c.waiters, t); i >= 0 {
		t.c.waiters = slices.Delete(t.c.waiters, i, i+1)
		return true
	}
	return false
}

// Run lets d more time pass.
func (c *simClock) Run(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limit = c.limit.Add(d)
	sort.SliceStable(c.waiters, func(i, j int) bool { return c.waiters[i].at.Before(c.waiters[j].at) })
	keep := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.limit) {
			keep = append(keep, w)
			continue
		}
		if w.at.After(c.now) {
			c.now = w.at
		}
		w.ch <- w.at
	}
	clear(c.waiters[len(keep):])
	c.waiters = keep
	// The time has passed whether or not anything waited on it: a
	// stream that is busy (reading its source) reads the clock too.
	c.now = c.limit
}

// quiet is the tests' logger: the faults they cause are expected.
var quiet = slog.New(slog.DiscardHandler)
