package httpapi

import (
	"math"
	"strconv"
	"sync"
	"time"
)

// limiter is a token bucket per user: rate tokens per second, at most
// burst stored.
type limiter struct {
	mu      sync.Mutex
	rate    float64
	burst   float64
	now     func() time.Time
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxBuckets bounds the map; beyond it full (idle) buckets are dropped,
// which loses nothing because a new bucket starts full.
const maxBuckets = 10000

func newLimiter(rate float64, burst int, now func() time.Time) *limiter {
	return &limiter{rate: rate, burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// allow takes a token of key's bucket. When there is none it reports
// false and the whole seconds until there will be one.
func (l *limiter) allow(key string) (retryAfter string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.dropIdle(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+el*l.rate)
	}
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return "", true
	}
	wait := math.Ceil((1 - b.tokens) / l.rate)
	return strconv.Itoa(int(max(1, wait))), false
}

func (l *limiter) dropIdle(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
}
