package httpapi

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// limiter is a leaky bucket per user kept as a throttle in the store, so
// that every API process of a scaled-out service draws from the same one:
// a request adds one unit, rate units leak away per second, and a request
// that would take the bucket above burst is refused.
type limiter struct {
	store storage.Throttles
	leak  time.Duration // time for one unit to leak
	burst float64
}

func newLimiter(store storage.Throttles, rate float64, burst int) *limiter {
	return &limiter{store: store, leak: time.Duration(float64(time.Second) / rate), burst: float64(burst)}
}

// rateKeyPrefix keeps the API's counters apart from the login throttles
// sharing the table.
const rateKeyPrefix = "api-rate:"

// allow takes a unit of userID's bucket at now. When the bucket is full it
// reports false and the whole seconds until a unit will fit.
func (l *limiter) allow(ctx context.Context, userID string, now time.Time) (retryAfter string, ok bool, err error) {
	t, ok, err := l.store.TakeThrottle(ctx, rateKeyPrefix+userID, now, l.leak, 1, l.burst)
	if err != nil || ok {
		return "", ok, err
	}
	over := t.LevelAt(now, l.leak) + 1 - l.burst
	wait := math.Ceil(over * l.leak.Seconds())
	return strconv.Itoa(int(max(1, wait))), false, nil
}
