package storage

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CredentialKeys are the keys of a Service's Config that hold
// credentials. A Store never writes them in clear text: it moves them out
// of the stored settings and keeps them sealed with its SecretKey, and
// gives them back merged into Config when it reads the service. Every
// service type names its secrets with these keys.
var CredentialKeys = []string{"username", "password", "private_key", "access_key", "secret_key", "api_key"}

// IsCredentialKey reports whether a Config key is one of CredentialKeys.
func IsCredentialKey(k string) bool {
	for _, c := range CredentialKeys {
		if c == k {
			return true
		}
	}
	return false
}

// SecretKeySize is the size of a SecretKey in bytes (AES-256).
const SecretKeySize = 32

// sealVersion is the first byte of a sealed value: the format
// (version, key id, nonce, AES-GCM ciphertext and tag).
const sealVersion = 1

// keyIDSize is the length of the key id a sealed value starts with.
const keyIDSize = 8

// SecretKey seals and opens secrets at rest with AES-256-GCM. A sealed
// value is
//
//	1 byte version (1) | 8 bytes key id | 12 bytes nonce | ciphertext and 16-byte tag
//
// The key id is an HMAC of a constant under the key: it tells which key
// sealed a value (so a process started with the wrong key says so instead
// of failing to decrypt) and reveals nothing about the key. The nonce is
// random; with 96 bits, a key may seal billions of values before a
// collision becomes likely, far beyond what a service registry writes.
// The caller's context (for example owner and uuid of the record) is
// authenticated with the value, so a sealed value copied to another
// record does not open there.
type SecretKey struct {
	aead cipher.AEAD
	id   [keyIDSize]byte
}

// NewSecretKey makes a SecretKey of SecretKeySize raw bytes.
func NewSecretKey(raw []byte) (*SecretKey, error) {
	if len(raw) != SecretKeySize {
		return nil, fmt.Errorf("%w: a secret key has %d bytes, not %d", ErrSecretKey, SecretKeySize, len(raw))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSecretKey, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSecretKey, err)
	}
	k := &SecretKey{aead: aead}
	m := hmac.New(sha256.New, raw)
	m.Write([]byte("audiopost secret key id"))
	copy(k.id[:], m.Sum(nil))
	return k, nil
}

// ParseSecretKey reads a key written as text: base64 (standard or URL
// alphabet, padded or not) or hex of SecretKeySize bytes. Surrounding
// white space is ignored. `openssl rand -base64 32` makes one, as does
// NewSecretKeyText.
func ParseSecretKey(text string) (*SecretKey, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("%w: empty", ErrSecretKey)
	}
	if len(text) == 2*SecretKeySize {
		if raw, err := hex.DecodeString(text); err == nil {
			return NewSecretKey(raw)
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err := enc.DecodeString(text); err == nil && len(raw) == SecretKeySize {
			return NewSecretKey(raw)
		}
	}
	return nil, fmt.Errorf("%w: not %d bytes in base64 or hex", ErrSecretKey, SecretKeySize)
}

// NewSecretKeyText returns a new random key as ParseSecretKey reads it
// (standard base64).
func NewSecretKeyText() string {
	raw := make([]byte, SecretKeySize)
	rand.Read(raw)
	return base64.StdEncoding.EncodeToString(raw)
}

// ReadSecretKeyFile reads a key file: the key as ParseSecretKey reads it.
func ReadSecretKeyFile(path string) (*SecretKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("storage: secret key file: %w", err)
	}
	k, err := ParseSecretKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("secret key file %s: %w", path, err)
	}
	return k, nil
}

// EnsureSecretKeyFile reads the key file at path, or, when there is none,
// writes a new random key there (mode 0600) and reports created. Two
// processes doing this at once end up with the same key: the file appears
// under its name only complete, and only once (a hard link, which never
// replaces an existing file).
func EnsureSecretKeyFile(path string) (k *SecretKey, created bool, err error) {
	if k, err := ReadSecretKeyFile(path); err == nil || !errors.Is(err, os.ErrNotExist) {
		return k, false, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".secret-key-*")
	if err != nil {
		return nil, false, fmt.Errorf("storage: secret key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	text := NewSecretKeyText()
	_, err = tmp.WriteString(text + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	switch {
	case errors.Is(err, os.ErrExist):
		k, err := ReadSecretKeyFile(path)
		return k, false, err
	case err != nil:
		return nil, false, fmt.Errorf("storage: secret key file: %w", err)
	}
	k, err = ParseSecretKey(text)
	return k, err == nil, err
}

// ID identifies the key (hex of its key id); it is safe to log.
func (k *SecretKey) ID() string { return hex.EncodeToString(k.id[:]) }

// Seal encrypts plaintext, authenticating context with it.
func (k *SecretKey) Seal(plaintext, context []byte) []byte {
	ns := k.aead.NonceSize()
	out := make([]byte, 1+keyIDSize+ns, 1+keyIDSize+ns+len(plaintext)+k.aead.Overhead())
	out[0] = sealVersion
	copy(out[1:], k.id[:])
	rand.Read(out[1+keyIDSize:])
	return k.aead.Seal(out, out[1+keyIDSize:], plaintext, context)
}

// Open decrypts a value Seal made with the same key and context. A value
// of another key, another context or tampered with is ErrSecretKey.
func (k *SecretKey) Open(sealed, context []byte) ([]byte, error) {
	id, err := SealedKeyID(sealed)
	if err != nil {
		return nil, err
	}
	if id != k.ID() {
		return nil, fmt.Errorf("%w: sealed with key %s, this key is %s", ErrSecretKey, id, k.ID())
	}
	ns := k.aead.NonceSize()
	if len(sealed) < 1+keyIDSize+ns+k.aead.Overhead() {
		return nil, fmt.Errorf("%w: sealed value too short", ErrSecretKey)
	}
	nonce := sealed[1+keyIDSize : 1+keyIDSize+ns]
	plain, err := k.aead.Open(nil, nonce, sealed[1+keyIDSize+ns:], context)
	if err != nil {
		return nil, fmt.Errorf("%w: the sealed value does not authenticate (tampered with, or moved from another record)", ErrSecretKey)
	}
	return plain, nil
}

// SealedKeyID returns the ID of the key that sealed a value.
func SealedKeyID(sealed []byte) (string, error) {
	if len(sealed) < 1+keyIDSize || sealed[0] != sealVersion {
		return "", fmt.Errorf("%w: not a sealed value", ErrSecretKey)
	}
	return hex.EncodeToString(sealed[1 : 1+keyIDSize]), nil
}

// Equal reports whether two keys are the same key.
func (k *SecretKey) Equal(o *SecretKey) bool {
	return k != nil && o != nil && bytes.Equal(k.id[:], o.id[:])
}
