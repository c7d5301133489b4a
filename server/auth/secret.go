package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// TokenPrefix starts every API token's secret, so that secret scanners
// can recognise a leaked one and Authenticate tells tokens from sessions.
const TokenPrefix = "chime_"

// maxCredential bounds the length of a presented token or session token;
// longer ones are refused before hashing.
const maxCredential = 256

// randomToken returns 32 random bytes, base64url-encoded without padding
// (43 characters).
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// randomID returns 8 random bytes in hexadecimal, an identifier that is not
// a secret.
func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// passwordAlphabet holds the characters of generated passwords: letters
// and digits, so that a password survives any copy and paste.
const passwordAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomPassword returns n characters of passwordAlphabet, each chosen
// uniformly (about 5.95 bits each: 119 bits for 20).
func randomPassword(n int) string {
	var b strings.Builder
	buf := make([]byte, 64)
	for b.Len() < n {
		_, _ = rand.Read(buf)
		for _, c := range buf {
			// 248 is the largest multiple of 62 that fits a byte: rejecting
			// larger bytes keeps every character equally likely.
			if c < 248 && b.Len() < n {
				b.WriteByte(passwordAlphabet[int(c)%len(passwordAlphabet)])
			}
		}
	}
	return b.String()
}

// hashSecret returns the hexadecimal SHA-256 of a session token or an API
// token's secret, the form in which they are stored and looked up. The
// secrets are 256 random bits, so a fast hash suffices: there is nothing to
// guess that a slow one would protect.
func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
