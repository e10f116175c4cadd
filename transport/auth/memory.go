package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// credCache remembers successful password checks, because PBKDF2 is slow on
// purpose and a script using Basic authentication sends the password with
// every request. Entries are keyed by an HMAC of username and password under
// a per-process random key, so the cache holds no password and nothing an
// attacker reading memory could test offline faster than the stored hashes.
type credCache struct {
	mu      sync.Mutex
	key     [32]byte
	ttl     time.Duration
	max     int
	entries map[[32]byte]credEntry
}

type credEntry struct {
	userID  string
	pwHash  string // the stored hash the password matched; a changed password misses
	expires time.Time
}

func newCredCache(max int, ttl time.Duration) *credCache {
	c := &credCache{ttl: ttl, max: max, entries: make(map[[32]byte]credEntry)}
	rand.Read(c.key[:])
	return c
}

func (c *credCache) id(login, password string) [32]byte {
	m := hmac.New(sha256.New, c.key[:])
	m.Write([]byte(login))
	m.Write([]byte{0})
	m.Write([]byte(password))
	var k [32]byte
	m.Sum(k[:0])
	return k
}

func (c *credCache) get(k [32]byte, now time.Time) (credEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || !now.Before(e.expires) {
		return credEntry{}, false
	}
	return e, true
}

func (c *credCache) put(k [32]byte, userID, pwHash string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		for id, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, id)
			}
		}
		// Still full: drop arbitrary entries; a miss only costs one PBKDF2.
		for id := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, id)
		}
	}
	c.entries[k] = credEntry{userID: userID, pwHash: pwHash, expires: now.Add(c.ttl)}
}

func (c *credCache) forget(k [32]byte) {
	c.mu.Lock()
	delete(c.entries, k)
	c.mu.Unlock()
}

// failureLimiter is a leaky bucket of failed logins per key (a username or
// a client IP): burst failures fill it, one drains every refill, and a full
// bucket refuses further attempts before any password is checked.
type failureLimiter struct {
	mu      sync.Mutex
	burst   float64
	refill  time.Duration
	max     int
	buckets map[string]bucket
}

type bucket struct {
	level float64
	at    time.Time
}

func newFailureLimiter(burst int, refill time.Duration, max int) *failureLimiter {
	return &failureLimiter{burst: float64(burst), refill: refill, max: max, buckets: make(map[string]bucket)}
}

func (l *failureLimiter) drained(b bucket, now time.Time) float64 {
	lv := b.level - float64(now.Sub(b.at))/float64(l.refill)
	return max(lv, 0)
}

// allow reports whether every key may attempt a login now, and if not, how
// long until one may.
func (l *failureLimiter) allow(now time.Time, keys ...string) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		b, ok := l.buckets[k]
		if !ok {
			continue
		}
		if lv := l.drained(b, now); lv > l.burst-1 {
			wait = max(wait, time.Duration((lv-(l.burst-1))*float64(l.refill)))
		}
	}
	return wait == 0, wait
}

func (l *failureLimiter) fail(now time.Time, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buckets)+len(keys) > l.max {
		for k, b := range l.buckets {
			if l.drained(b, now) == 0 {
				delete(l.buckets, k)
			}
		}
		for k := range l.buckets {
			if len(l.buckets)+len(keys) <= l.max {
				break
			}
			delete(l.buckets, k)
		}
	}
	for _, k := range keys {
		b := l.buckets[k]
		l.buckets[k] = bucket{level: l.drained(b, now) + 1, at: now}
	}
}

// succeed clears a key, so that a user who mistyped a few times and then
// logged in starts afresh. Only the username key is cleared: an IP that
// guesses many accounts stays slowed down.
func (l *failureLimiter) succeed(key string) {
	l.mu.Lock()
	delete(l.buckets, key)
	l.mu.Unlock()
}

// sessionStore holds browser sessions in memory, keyed by the hash of the
// cookie's token so that a memory dump does not hand out live cookies.
type sessionStore struct {
	mu  sync.Mutex
	ttl time.Duration
	max int
	m   map[string]session
}

type session struct {
	userID  string
	csrf    string
	expires time.Time
}

func newSessionStore(ttl time.Duration, max int) *sessionStore {
	return &sessionStore{ttl: ttl, max: max, m: make(map[string]session)}
}

// create starts a session and returns its cookie token.
func (s *sessionStore) create(userID string, now time.Time) (string, session) {
	tok := storage.NewToken()
	ses := session{userID: userID, csrf: storage.NewToken(), expires: now.Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		for k, v := range s.m {
			if !now.Before(v.expires) {
				delete(s.m, k)
			}
		}
		// Still full: the oldest sessions would be the fairest victims, but
		// any will do against a flood of logins.
		for k := range s.m {
			if len(s.m) < s.max {
				break
			}
			delete(s.m, k)
		}
	}
	s.m[string(storage.HashToken(tok))] = ses
	return tok, ses
}

func (s *sessionStore) get(tok string, now time.Time) (session, bool) {
	h := string(storage.HashToken(tok))
	s.mu.Lock()
	defer s.mu.Unlock()
	ses, ok := s.m[h]
	if !ok {
		return session{}, false
	}
	if !now.Before(ses.expires) {
		delete(s.m, h)
		return session{}, false
	}
	return ses, true
}

func (s *sessionStore) delete(tok string) {
	s.mu.Lock()
	delete(s.m, string(storage.HashToken(tok)))
	s.mu.Unlock()
}
