package auth

import (
	"context"
	"math"
	"strings"
	"time"
)

// Throttle tunes login throttling: how failed password checks (HTTP Basic,
// the login form, the OAuth password grant) slow down further attempts.
// Its counters live in the store (storage.Throttles), so every API process
// on one store applies the same limits. Zero fields take the defaults.
//
// Three counters see each failure:
//
//   - per (user, client address), the attacker's: PairFree failures are
//     free, then each further attempt from that address for that user
//     waits PairBase, doubling with every failure up to PairMax. One
//     failure is forgotten every PairLeak, and all at a successful login.
//     With the defaults one address gets 5 guesses at once, 10 within
//     about a minute, and then about 4 an hour per user.
//   - per client address, whatever the user: AddressBurst failures, then
//     one more every AddressLeak (password spraying across accounts).
//   - per user, from every address together: the ceiling UserCeiling,
//     then one more every UserLeak. It is far above what one address can
//     reach, so the owner's right password from another address gets in
//     at once while one address (or a few) guess; only a distributed
//     attack reaches it, and then addresses the user logged in from
//     within TrustedFor still get in.
//
// A refused attempt does not check the password at all; it is logged and
// counted for the account page, which shows the user how many attempts
// were refused and the last address.
type Throttle struct {
	PairFree                   int
	PairBase, PairMax          time.Duration
	PairLeak                   time.Duration
	AddressBurst               int
	AddressLeak                time.Duration
	UserCeiling                int
	UserLeak                   time.Duration
	TrustedFor                 time.Duration
	trustedRefresh, purgeAfter time.Duration
}

// Defaults of Throttle.
const (
	DefaultPairFree     = 5
	DefaultPairBase     = time.Second
	DefaultPairMax      = 15 * time.Minute
	DefaultPairLeak     = 15 * time.Minute
	DefaultAddressBurst = 50
	DefaultAddressLeak  = 20 * time.Second
	DefaultUserCeiling  = 100
	DefaultUserLeak     = 36 * time.Second
	DefaultTrustedFor   = 30 * 24 * time.Hour
)

func (t *Throttle) defaults() {
	setDefault(&t.PairFree, DefaultPairFree)
	setDefault(&t.PairBase, DefaultPairBase)
	setDefault(&t.PairMax, DefaultPairMax)
	setDefault(&t.PairLeak, DefaultPairLeak)
	setDefault(&t.AddressBurst, DefaultAddressBurst)
	setDefault(&t.AddressLeak, DefaultAddressLeak)
	setDefault(&t.UserCeiling, DefaultUserCeiling)
	setDefault(&t.UserLeak, DefaultUserLeak)
	setDefault(&t.TrustedFor, DefaultTrustedFor)
	t.trustedRefresh = time.Hour
	t.purgeAfter = t.TrustedFor + 24*time.Hour
}

func setDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// throttleKeys names the counters of one login attempt. subject is
// "u:<user id>" for an existing user, else "n:<lower-case login>", so
// that a user's username and email share their counters.
type throttleKeys struct {
	pair, addr, user, trusted, alert string
}

func newThrottleKeys(subject, ip string) throttleKeys {
	k := throttleKeys{pair: "login-pair:" + subject + "|" + ip, user: "login-user:" + subject}
	if ip != "" {
		k.addr = "login-addr:" + ip
		k.trusted = "login-ok:" + subject + "|" + ip
	}
	if strings.HasPrefix(subject, "u:") {
		k.alert = alertKey(strings.TrimPrefix(subject, "u:"))
	}
	return k
}

func alertKey(userID string) string { return "login-refused:" + userID }

func (k throttleKeys) list() []string {
	var l []string
	for _, s := range []string{k.pair, k.addr, k.user, k.trusted} {
		if s != "" {
			l = append(l, s)
		}
	}
	return l
}

// throttleWait reports how long the attempt must wait (0: it may go on).
func (s *Server) throttleWait(ctx context.Context, k throttleKeys, now time.Time) (time.Duration, error) {
	c := s.cfg.Throttle
	m, err := s.store.GetThrottles(ctx, k.list()...)
	if err != nil {
		return 0, err
	}
	var wait time.Duration
	if p, ok := m[k.pair]; ok {
		if lv := p.LevelAt(now, c.PairLeak); lv >= float64(c.PairFree) {
			d := c.PairMax
			if n := math.Floor(lv) - float64(c.PairFree); n < 30 {
				d = min(c.PairMax, c.PairBase<<int(n))
			}
			wait = max(wait, p.At.Add(d).Sub(now))
		}
	}
	if a, ok := m[k.addr]; ok && k.addr != "" {
		if lv := a.LevelAt(now, c.AddressLeak); lv > float64(c.AddressBurst-1) {
			wait = max(wait, time.Duration((lv-float64(c.AddressBurst-1))*float64(c.AddressLeak)))
		}
	}
	if u, ok := m[k.user]; ok {
		if lv := u.LevelAt(now, c.UserLeak); lv > float64(c.UserCeiling-1) {
			t, trusted := m[k.trusted]
			if !trusted || now.Sub(t.At) >= c.TrustedFor {
				wait = max(wait, time.Duration((lv-float64(c.UserCeiling-1))*float64(c.UserLeak)))
			}
		}
	}
	return max(wait, 0), nil
}

// throttleRefused records an attempt refused by the throttle: a warning
// in the log (at the 1st, 10th, 100th... refusal, so an attack does not
// flood it) and the count the account page shows.
func (s *Server) throttleRefused(ctx context.Context, k throttleKeys, login, ip string, wait time.Duration, now time.Time) {
	if k.alert == "" {
		// No such user: nobody to tell; log the first of a burst only.
		if s.alertDue("login-refused-unknown", now) {
			s.log.WarnContext(ctx, "auth: login throttled after failed passwords", "login", login, "addr", ip,
				"retry_in", wait.Round(time.Second))
		}
		return
	}
	if !s.alertDue(k.alert, now) {
		return
	}
	t, err := s.store.AddThrottle(ctx, k.alert, now, 0, 1, ip)
	if err != nil {
		s.log.ErrorContext(ctx, "auth: recording a refused login", "err", err)
		return
	}
	if n := t.Level; n <= 1 || isPowerOf10(n) {
		s.log.WarnContext(ctx, "auth: login throttled after failed passwords", "login", login, "addr", ip,
			"retry_in", wait.Round(time.Second), "refused_so_far", int(n))
	}
}

// alertDue reports whether a refused attempt on key is recorded: at most
// one a second per user and process, because refused attempts cost the
// attacker nothing (no password check) and each record is a write to the
// store. The account page's count is thus a lower bound under a flood.
func (s *Server) alertDue(key string, now time.Time) bool {
	s.purgeMu.Lock()
	defer s.purgeMu.Unlock()
	if s.alertLast == nil || len(s.alertLast) > 10000 {
		s.alertLast = map[string]time.Time{}
	}
	if last, ok := s.alertLast[key]; ok && now.Sub(last) < time.Second && !now.Before(last) {
		return false
	}
	s.alertLast[key] = now
	return true
}

func isPowerOf10(f float64) bool {
	l := math.Log10(f)
	return l == math.Trunc(l)
}

// throttleFailed counts a wrong password.
func (s *Server) throttleFailed(ctx context.Context, k throttleKeys, ip string, now time.Time) error {
	c := s.cfg.Throttle
	for _, x := range []struct {
		key  string
		leak time.Duration
	}{{k.pair, c.PairLeak}, {k.addr, c.AddressLeak}, {k.user, c.UserLeak}} {
		if x.key == "" {
			continue
		}
		if _, err := s.store.AddThrottle(ctx, x.key, now, x.leak, 1, ip); err != nil {
			return err
		}
	}
	s.maybePurge(ctx, now)
	return nil
}

// throttleSucceeded forgets the failures of this (user, address) and
// remembers the address as one the user logs in from. The address and
// user counters stay: other addresses' guesses still count.
func (s *Server) throttleSucceeded(ctx context.Context, k throttleKeys, now time.Time) error {
	m, err := s.store.GetThrottles(ctx, k.pair, k.trusted)
	if err != nil {
		return err
	}
	if _, ok := m[k.pair]; ok {
		if err := s.store.DeleteThrottles(ctx, k.pair); err != nil {
			return err
		}
	}
	if t, ok := m[k.trusted]; k.trusted != "" && (!ok || now.Sub(t.At) >= s.cfg.Throttle.trustedRefresh) {
		if _, err := s.store.AddThrottle(ctx, k.trusted, now, 0, 0, ""); err != nil {
			return err
		}
	}
	return nil
}

// maybePurge removes long unused counters about once an hour per process.
func (s *Server) maybePurge(ctx context.Context, now time.Time) {
	s.purgeMu.Lock()
	due := now.Sub(s.lastPurge) >= time.Hour
	if due {
		s.lastPurge = now
	}
	s.purgeMu.Unlock()
	if !due {
		return
	}
	if _, err := s.store.PurgeThrottles(ctx, now.Add(-s.cfg.Throttle.purgeAfter)); err != nil {
		s.log.WarnContext(ctx, "auth: purging old login counters", "err", err)
	}
}

// loginAlert is what the account page says about refused logins.
type loginAlert struct {
	Count    int
	LastAddr string
	LastAt   string
}

func (s *Server) loginAlert(ctx context.Context, userID string) (*loginAlert, error) {
	m, err := s.store.GetThrottles(ctx, alertKey(userID))
	if err != nil {
		return nil, err
	}
	t, ok := m[alertKey(userID)]
	if !ok || t.Level < 1 {
		return nil, nil
	}
	return &loginAlert{Count: int(t.Level), LastAddr: t.Note, LastAt: fmtTime(t.At)}, nil
}
