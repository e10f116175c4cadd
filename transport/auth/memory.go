package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"time"
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
