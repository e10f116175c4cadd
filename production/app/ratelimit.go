package app

import (
	"context"
	"math"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// RateLimit is a leaky bucket per user kept as a throttle in the store,
// so that every API process of a scaled-out service draws from the same
// one: a request adds one unit, Rate units leak away per second, and a
// request that would take the bucket above Burst is refused.
type RateLimit struct {
	// Rate is the sustained number of requests per second.
	Rate float64
	// Burst is the bucket size; 0 means max(1, 2*Rate).
	Burst int
}

// rateKeyPrefix keeps the API's counters apart from the login throttles
// sharing the table.
const rateKeyPrefix = "api-rate:"

// TakeRequest counts one request of u at now against lim. When u's
// bucket is full it reports false and how long until a unit will fit.
func (a *App) TakeRequest(ctx context.Context, u storage.User, lim RateLimit, now time.Time) (wait time.Duration, ok bool, err error) {
	if lim.Rate <= 0 {
		return 0, true, nil
	}
	burst := float64(lim.Burst)
	if burst <= 0 {
		burst = max(1, math.Trunc(2*lim.Rate))
	}
	leak := time.Duration(float64(time.Second) / lim.Rate)
	t, ok, err := a.store.TakeThrottle(ctx, rateKeyPrefix+u.ID, now, leak, 1, burst)
	if err != nil || ok {
		return 0, ok, err
	}
	over := t.LevelAt(now, leak) + 1 - burst
	return time.Duration(over * float64(leak)), false, nil
}
