package config

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
)

// MinTokenLength is the shortest pairing token accepted. NewToken makes 43.
const MinTokenLength = 32

// NewToken returns a fresh pairing token: 32 bytes from crypto/rand as
// unpadded base64url (43 characters), safe to paste and to write in YAML.
func NewToken() string {
	var b [32]byte
	// crypto/rand.Read never fails since Go 1.24; it crashes the program
	// rather than return weak bytes.
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// MaskToken shows only the first and last four characters of a token, enough
// to compare it with the extension's options page without revealing it.
// Tokens too short to mask meaningfully are hidden entirely.
func MaskToken(t string) string {
	r := []rune(t)
	if len(r) < 12 {
		return strings.Repeat("*", 4)
	}
	return string(r[:4]) + "…" + string(r[len(r)-4:])
}
