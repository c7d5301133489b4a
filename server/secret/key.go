package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the size of a secret key in bytes: AES-256.
const KeySize = 32

// Key encrypts and decrypts the values of secrets with AES-256-GCM. Make
// one with ParseKey; the zero Key is not usable.
type Key struct {
	aead cipher.AEAD
	id   string
}

// ErrInvalidKey is wrapped by the errors of ParseKey.
var ErrInvalidKey = errors.New("invalid secret key")

// ParseKey decodes a key written as the standard or URL-safe base64 of 32
// bytes (padding optional), such as GenerateKey returns or
// `openssl rand -base64 32` prints. Surrounding spaces and a final
// newline are ignored. The error names the problem, never the key.
func ParseKey(text string) (*Key, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidKey)
	}
	var raw []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err = enc.DecodeString(text); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: not base64 (generate one with `chime secrets keygen` or `openssl rand -base64 32`)", ErrInvalidKey)
	}
	if len(raw) != KeySize {
		return nil, fmt.Errorf("%w: decodes to %d bytes, want %d (generate one with `chime secrets keygen` or `openssl rand -base64 32`)",
			ErrInvalidKey, len(raw), KeySize)
	}
	return newKey(raw)
}

// newKey returns the key of 32 raw bytes.
func newKey(raw []byte) (*Key, error) {
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	// The ID is a hash of the key under a label of its own, so that it
	// identifies the key without revealing anything usable about it.
	sum := sha256.Sum256(append([]byte("chime secret key id\x00"), raw...))
	return &Key{aead: aead, id: hex.EncodeToString(sum[:8])}, nil
}

// GenerateKey returns a new random key in the form ParseKey reads.
func GenerateKey() string {
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails
	return base64.StdEncoding.EncodeToString(raw)
}

// ID identifies the key: 16 hexadecimal digits of a SHA-256 of it. It is
// stored with every value the key encrypts, so that a value encrypted
// with another key is told apart from a damaged one.
func (k *Key) ID() string { return k.id }

// seal encrypts plaintext, bound to ad (the secret's scheduler and name,
// so that a value copied to another row does not decrypt), and returns
// the nonce followed by the ciphertext, in base64.
func (k *Key) seal(plaintext, ad []byte) string {
	nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plaintext)+k.aead.Overhead())
	_, _ = rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(k.aead.Seal(nonce, nonce, plaintext, ad))
}

// errTampered is the error of a value that does not decrypt with the key
// whose ID it carries.
var errTampered = errors.New("the stored value does not decrypt: it was altered, or copied from another secret")

// open decrypts what seal returned.
func (k *Key) open(sealed string, ad []byte) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < k.aead.NonceSize()+k.aead.Overhead() {
		return nil, errTampered
	}
	n := k.aead.NonceSize()
	plain, err := k.aead.Open(nil, raw[:n], raw[n:], ad)
	if err != nil {
		return nil, errTampered
	}
	return plain, nil
}
