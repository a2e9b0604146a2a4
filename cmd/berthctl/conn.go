package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/cmd/berthctl/target"
	"github.com/berthhq/berth/pkg/grpcx"
)

// lazyConn finds Berth and dials the service on the command's first call, so that a command's
// flags are checked before berthctl looks for Berth at all, and turns the call's gRPC status into
// words.
type lazyConn struct {
	service string
	apiKey  string // the type of API key the command presents (command.apiKey)
	resolve func() (target.Target, error)
	conn    *grpc.ClientConn
	target  target.Target
}

func (l *lazyConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if err := l.dial(); err != nil {
		return err
	}
	return l.describe(l.conn.Invoke(ctx, method, args, reply, opts...))
}

// NewStream opens a streamed list (audit-log); its errors, when it is opened and on each message,
// are described like a call's.
func (l *lazyConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if err := l.dial(); err != nil {
		return nil, err
	}
	s, err := l.conn.NewStream(ctx, desc, method, opts...)
	if err != nil {
		return nil, l.describe(err)
	}
	return describedStream{ClientStream: s, l: l}, nil
}

// describedStream describes the errors a stream's messages end with (io.EOF passes as it is).
type describedStream struct {
	grpc.ClientStream
	l *lazyConn
}

func (s describedStream) RecvMsg(m any) error { return s.l.describe(s.ClientStream.RecvMsg(m)) }

// dial finds Berth and dials the command's service, once.
func (l *lazyConn) dial() error {
	if l.conn != nil {
		return nil
	}
	t, err := l.resolve()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(t.Addrs[l.service], append(grpcx.ClientOptions("", t.TLS),
		grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(t.Token)))...)
	if err != nil {
		return fmt.Errorf("%s address %q (%s): %w", l.service, t.Addrs[l.service], t.AddrFrom[l.service], err)
	}
	l.conn, l.target = conn, t
	return nil
}

func (l *lazyConn) close() {
	if l.conn != nil {
		_ = l.conn.Close() // nothing is pending once the command is done
	}
}

// describe says what a failed call's status means to an operator, in words, on one line.
func (l *lazyConn) describe(err error) error {
	st, ok := status.FromError(err)
	if err == nil || !ok {
		return err
	}
	t, svc := l.target, l.service
	msg := strings.ReplaceAll(st.Message(), "\n", " ")
	switch st.Code() {
	case codes.Unavailable:
		return fmt.Errorf("unavailable: is berth running? (make run) — %s at %s, from %s", svc, t.Addrs[svc], t.AddrFrom[svc])
	case codes.Unauthenticated, codes.PermissionDenied:
		if l.apiKey != "" { // the command presents the app's API key, not the admin token
			return fmt.Errorf("permission denied: %s is not a %s API key of the app", target.APIKeyVar, l.apiKey)
		}
		return fmt.Errorf("permission denied: the admin token was refused (token from %s)", t.TokenFrom)
	case codes.DeadlineExceeded:
		return fmt.Errorf("timed out: %s at %s did not answer in time", svc, t.Addrs[svc])
	case codes.InvalidArgument, codes.FailedPrecondition:
		return errors.New(msg)
	}
	if msg == "" {
		return errors.New(codeWords(st.Code()))
	}
	return fmt.Errorf("%s: %s", codeWords(st.Code()), msg)
}

// codeWords writes a gRPC code as words: NotFound is "not found".
func codeWords(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteRune(' ')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
