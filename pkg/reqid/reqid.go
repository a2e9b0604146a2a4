// Package reqid carries the request id: the edge accepts or mints one per HTTP request, forwards it
// to services as gRPC metadata, and every log line of that request names it.
package reqid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
)

// Header is the HTTP header; MetadataKey the gRPC metadata key (lower case, as gRPC requires).
const (
	Header      = "X-Request-Id"
	MetadataKey = "x-request-id"
)

type ctxKey struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the request id of ctx, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// New mints a random 128-bit id.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Accept returns a caller-supplied id when it is short and plain — 1 to 128 of A–Z, a–z, 0–9 and
// . _ : - — so it cannot forge log lines, and a fresh one otherwise. Every request passes here
// at the edge and again in the service, so the check is a loop rather than a regular expression.
func Accept(supplied string) string {
	if safe(supplied) {
		return supplied
	}
	return New()
}

func safe(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}
