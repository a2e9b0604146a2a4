// Package reqid carries the request id: the edge accepts or mints one per HTTP request, forwards it
// to services as gRPC metadata, and every log line of that request names it.
package reqid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"regexp"
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

var safe = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// Accept returns a caller-supplied id when it is short and plain (so it cannot forge log lines),
// and a fresh one otherwise.
func Accept(supplied string) string {
	if safe.MatchString(supplied) {
		return supplied
	}
	return New()
}
