package storage

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// NewToken returns a fresh random secret (256 bits, URL-safe base64 without
// padding) for an API key, OAuth code, access token or client secret. Hand
// it to the user once and store only HashToken of it.
func NewToken() string {
	var b [32]byte
	rand.Read(b[:]) // never fails since Go 1.24: it crashes the program instead
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// HashToken returns the SHA-256 of a token. A fast hash is enough because
// tokens carry 256 bits of entropy: nobody can brute-force the preimage, and
// an index lookup by hash leaks nothing useful through timing.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// EqualHash compares two hashes in constant time.
func EqualHash(a, b []byte) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare(a, b) == 1
}

// NewUUID returns a random (version 4) UUID in canonical lower-case form.
func NewUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// PasswordIterations is the PBKDF2-HMAC-SHA256 iteration count HashPassword
// uses (the OWASP 2023 recommendation). Hashes made with fewer iterations
// still verify; PasswordNeedsRehash reports them so callers can upgrade at
// the next successful login.
const PasswordIterations = 600_000

const (
	passwordScheme  = "pbkdf2-sha256"
	passwordSaltLen = 16
	passwordKeyLen  = 32
	// maxIterations bounds the work a corrupted or hostile stored hash can
	// make CheckPassword do.
	maxIterations = 10_000_000
)

// HashPassword derives a storable hash from a password with PBKDF2-HMAC-SHA256,
// a random 128-bit salt and PasswordIterations rounds. The result is
// self-describing: "pbkdf2-sha256$<iterations>$<salt>$<key>" (base64).
func HashPassword(password string) (string, error) {
	return hashPassword(password, PasswordIterations)
}

// HashPasswordIterations is HashPassword with another iteration count (at
// least 1000): tests use few, to stay fast under the race detector; the
// hash verifies like any other and PasswordNeedsRehash flags it.
func HashPasswordIterations(password string, iterations int) (string, error) {
	if iterations < 1000 || iterations > maxIterations {
		return "", fmt.Errorf("storage: %d password hash iterations outside 1000-%d", iterations, maxIterations)
	}
	return hashPassword(password, iterations)
}

func hashPassword(password string, iter int) (string, error) {
	salt := make([]byte, passwordSaltLen)
	rand.Read(salt)
	key, err := pbkdf2.Key(sha256.New, password, salt, iter, passwordKeyLen)
	if err != nil {
		return "", fmt.Errorf("storage: hash password: %w", err)
	}
	return passwordScheme + "$" + strconv.Itoa(iter) + "$" +
		base64.RawStdEncoding.EncodeToString(salt) + "$" +
		base64.RawStdEncoding.EncodeToString(key), nil
}

// CheckPassword reports whether password matches a hash made by
// HashPassword. A malformed hash never matches. The comparison of the
// derived keys is constant-time.
func CheckPassword(hash, password string) bool {
	iter, salt, key, ok := parsePasswordHash(hash)
	if !ok {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, iter, len(key))
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got, key) == 1
}

// PasswordNeedsRehash reports whether a stored hash is malformed or weaker
// than what HashPassword makes today.
func PasswordNeedsRehash(hash string) bool {
	iter, _, _, ok := parsePasswordHash(hash)
	return !ok || iter < PasswordIterations
}

func parsePasswordHash(hash string) (iter int, salt, key []byte, ok bool) {
	parts := strings.Split(hash, "$")
	if len(parts) != 4 || parts[0] != passwordScheme {
		return 0, nil, nil, false
	}
	iter, err := strconv.Atoi(parts[1])
	if err != nil || iter < 1 || iter > maxIterations {
		return 0, nil, nil, false
	}
	salt, err = base64.RawStdEncoding.DecodeString(parts[2])
	if err != nil || len(salt) < 8 {
		return 0, nil, nil, false
	}
	key, err = base64.RawStdEncoding.DecodeString(parts[3])
	if err != nil || len(key) < 16 || len(key) > 64 {
		return 0, nil, nil, false
	}
	return iter, salt, key, true
}
