package livestream_test

import (
	"log/slog"
	"sort"
	"sync"
	"time"
)

// simClock is simulated time that the test lets pass with Run: waiters
// whose time comes fire in order, and the clock then reads the new time.
// After(d) fires at once, moving the clock on by d, while now+d is within
// the limit Run set (never after Run), and waits for the limit to be
// raised otherwise. A stream run on it does in an instant what takes the limit's
// time on a wall clock, and stops exactly there.
type simClock struct {
	mu      sync.Mutex
	now     time.Time
	limit   time.Time
	waiters []simWaiter
}

type simWaiter struct {
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
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	at := c.now.Add(d)
	if !at.After(c.limit) {
		c.now = at
		ch <- at
		return ch
	}
	c.waiters = append(c.waiters, simWaiter{at, ch})
	return ch
}

// Run lets d more time pass.
func (c *simClock) Run(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.limit = c.limit.Add(d)
	sort.Slice(c.waiters, func(i, j int) bool { return c.waiters[i].at.Before(c.waiters[j].at) })
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
	c.waiters = keep
	// The time has passed whether or not anything waited on it: a
	// stream that is busy (reading its source) reads the clock too.
	c.now = c.limit
}

// quiet is the tests' logger: the faults they cause are expected.
var quiet = slog.New(slog.DiscardHandler)
