package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/berthhq/berth/gateway/pbjson"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
)

// Streamed lists. A long list (routes 6, 7, 9, the audit log) is a server-streaming RPC whose messages are
// chunks: the first carries `head` (a ListHead: kind and itemsLength, the number of items all
// chunks hold), every chunk carries `items`. The edge writes the /v1 envelope around them as they
// arrive, so an answer of any length passes through in constant memory:
//
//	{"success":true,"message":…,"error":null,"data":{"kind":…,"itemsLength":N,"items":[ item,item,… ]}}
//
// grpc-gateway forwards a stream with runtime.ForwardResponseStream, which writes what the
// forward-response rewriter returns as raw bytes when it is an HttpBody, and flushes after each
// message (its newline between messages is JSON whitespace). The pieces:
//
//   - prime: gRPC reports an error that ends a stream before its first message (a bad range, a
//     wrong key) only on the first Recv, which the runtime makes after it has committed to
//     streaming and answers in its own {"error":…} shape. The clients the edge registers
//     therefore receive the first message before returning the stream: such an error is the
//     call's, which the generated handler gives to runtime.HTTPError, so errorHandler answers it
//     in the route's family with its status, exactly like a unary route's.
//   - renderChunk (the rewriter, through envelope): the head chunk becomes the envelope's start
//     and the data's kind and itemsLength; every chunk's items follow, comma-separated. It
//     refuses a chunk before the head, a second head, items beyond itemsLength and any chunk
//     after one carrying a paged list's `next` cursor (the audit log's), which it keeps.
//   - guardStreams (around the mux) holds the request's listGuard in the context, where the
//     rewriter and the stream error handler (streamFailed) find it. When the mux returns it
//     writes the list's end `]}}` only if the stream ended cleanly with exactly the items it
//     announced (with `,"next":…` before the last brace when the stream gave a cursor). Otherwise, nothing written yet: a 500 in the family; bytes already out: abort
//     (http.ErrAbortHandler), so the client sees a broken response, never a list that parses.
//     Writing the end only after the stream's clean end (not with its last announced item)
//     means a stream that then sends more, or fails, cannot leave a complete-looking body.

// primed is a stream whose first message was received when it was opened.
type primed[T any] struct {
	grpc.ServerStreamingClient[T]
	first *T
}

// prime receives the first message of a just-opened stream, so an error that ends the stream
// before it is the open call's error. A stream that ends with no message at all is an error too:
// a list stream always sends its head.
func prime[T any](s grpc.ServerStreamingClient[T], err error) (grpc.ServerStreamingClient[T], error) {
	if err != nil {
		return nil, err
	}
	first, err := s.Recv()
	if errors.Is(err, io.EOF) {
		return nil, status.Error(codes.Internal, "list stream ended before its head")
	}
	if err != nil {
		return nil, err
	}
	return &primed[T]{ServerStreamingClient: s, first: first}, nil
}

func (p *primed[T]) Recv() (*T, error) {
	if f := p.first; f != nil {
		p.first = nil
		return f, nil
	}
	return p.ServerStreamingClient.Recv()
}

// primedAnalytics is the analytics client the edge registers: its streamed lists are primed.
type primedAnalytics struct {
	analyticsv1.AnalyticsServiceClient
}

func (c primedAnalytics) ListSubscriptions(ctx context.Context, in *analyticsv1.ListRangeRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[analyticsv1.SubscriptionChunk], error) {
	return prime(c.AnalyticsServiceClient.ListSubscriptions(ctx, in, opts...))
}

func (c primedAnalytics) ListOneTimePayments(ctx context.Context, in *analyticsv1.ListRangeRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[analyticsv1.OneTimePaymentChunk], error) {
	return prime(c.AnalyticsServiceClient.ListOneTimePayments(ctx, in, opts...))
}

func (c primedAnalytics) ListTenants(ctx context.Context, in *analyticsv1.ListRangeRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[analyticsv1.TenantChunk], error) {
	return prime(c.AnalyticsServiceClient.ListTenants(ctx, in, opts...))
}

func (c primedAnalytics) ListAuditEntries(ctx context.Context, in *analyticsv1.ListAuditEntriesRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[analyticsv1.AuditEntryChunk], error) {
	return prime(c.AnalyticsServiceClient.ListAuditEntries(ctx, in, opts...))
}

// chunkFields are the head and items fields of a list chunk type, and its optional `next`: a
// string field a paged list sets, in its last message, to the next page's cursor.
type chunkFields struct{ head, items, next protoreflect.FieldDescriptor }

var chunkTypes sync.Map // protoreflect.FullName -> chunkFields, or false for other messages

// chunkOf reports whether m is a list chunk: a `head` of type ListHead and repeated message `items`.
// The head's type, not only the field names, decides: the rewriter sees every response, and a
// message that merely has fields called head and items must keep rendering as itself. A list in
// another context reuses berth.analytics.v1.ListHead (or this check learns its head type).
func chunkOf(m protoreflect.Message) (chunkFields, bool) {
	md := m.Descriptor()
	if v, ok := chunkTypes.Load(md.FullName()); ok {
		c, ok := v.(chunkFields)
		return c, ok
	}
	head, items := md.Fields().ByName("head"), md.Fields().ByName("items")
	listHead := (&analyticsv1.ListHead{}).ProtoReflect().Descriptor().FullName()
	if head == nil || head.Message() == nil || head.Message().FullName() != listHead ||
		items == nil || !items.IsList() || items.Message() == nil {
		chunkTypes.Store(md.FullName(), false)
		return chunkFields{}, false
	}
	c := chunkFields{head: head, items: items}
	if next := md.Fields().ByName("next"); next != nil && next.Kind() == protoreflect.StringKind && !next.IsList() {
		c.next = next
	}
	chunkTypes.Store(md.FullName(), c)
	return c, true
}

// listGuard is one request's streamed list: how far it got and whether it failed.
type listGuard struct {
	announced, written int
	opened             bool   // the head was rendered: bytes of the list are (about to be) out
	next               string // a paged list's cursor of its next page, from its last chunk
	failed             error  // set by the stream error handler
	// buf holds the rendered chunk. The runtime writes a chunk out before it receives the next, so
	// one buffer serves the whole list instead of a new one, grown from nothing, per chunk.
	buf []byte
}

// end closes the items array, then the data (with the next page's cursor, when the list gave
// one) and the envelope.
func (g *listGuard) end() []byte {
	if g.next == "" {
		return []byte("]}}")
	}
	return append(strconv.AppendQuote([]byte(`],"next":`), g.next), "}}"...)
}

// chunk renders one chunk of route r's list: the envelope's head with the first, then the items.
// The list's end is guardStreams' to write.
func (g *listGuard) chunk(r *edgev1.Route, m protoreflect.Message, f chunkFields) (*httpbody.HttpBody, error) {
	b := g.buf[:0]
	if m.Has(f.head) {
		if g.opened {
			return nil, errors.New("list stream sent a second head")
		}
		h := m.Get(f.head).Message().Interface().(*analyticsv1.ListHead)
		if h.GetItemsLength() < 0 {
			return nil, errors.New("list stream announced a negative length")
		}
		b = append(append(b, v1Head(r.GetMessage())...), `{"kind":`...)
		b = strconv.AppendQuote(b, h.GetKind()) // kinds are ASCII identifiers
		b = append(b, `,"itemsLength":`...)
		b = strconv.AppendInt(b, int64(h.GetItemsLength()), 10)
		b = append(b, `,"items":[`...)
		g.announced, g.opened = int(h.GetItemsLength()), true
	} else if !g.opened {
		return nil, errors.New("list stream sent items before its head")
	}
	items := m.Get(f.items).List()
	// The cursor ends the list: items or another cursor after it would make it a position in
	// the middle. (A message with neither, which the stream may still yield, renders as nothing.)
	if g.next != "" && items.Len() > 0 {
		return nil, errors.New("list stream sent items after its cursor")
	}
	if f.next != nil {
		switch next := m.Get(f.next).String(); {
		case next == "":
		case g.next != "":
			return nil, errors.New("list stream sent a second cursor")
		default:
			g.next = next
		}
	}
	if g.written+items.Len() > g.announced {
		return nil, fmt.Errorf("list stream sent more than the %d items it announced", g.announced)
	}
	var err error
	for i := range items.Len() {
		if g.written > 0 {
			b = append(b, ',')
		}
		if b, err = pbjson.Append(b, items.Get(i).Message().Interface()); err != nil {
			return nil, err
		}
		g.written++
	}
	g.buf = b
	return &httpbody.HttpBody{ContentType: "application/json", Data: b}, nil
}

// renderChunk is rewriteSuccess for a list chunk.
func renderChunk(ctx context.Context, r *edgev1.Route, m protoreflect.Message, f chunkFields) (proto.Message, error) {
	ex, ok := ctx.Value(exchangeKey{}).(*exchange)
	if !ok {
		return nil, errors.New("edge: a list stream outside the stream guard")
	}
	g := &ex.guard
	if r.GetFamily() != edgev1.Family_FAMILY_V1 {
		return nil, errors.New("edge: lists stream in the /v1 family only")
	}
	return g.chunk(r, m, f)
}

// streamFailed is the mux's stream error handler. It is reached only once a stream has started
// (its opening errors are the open call's, see prime): it records the failure for guardStreams,
// which decides how the answer ends.
func streamFailed(ctx context.Context, err error) *status.Status {
	if g := &exchangeOf(ctx).guard; g.failed == nil {
		g.failed = err
	}
	return status.Convert(err)
}

// guardStreams gives each request a listGuard and ends its streamed list, if it has one: with
// the list's end when the stream ended cleanly with every item it announced; before any byte
// went out, with a 500 in the path's family (its cause logged at error, like any 500's); after,
// with an aborted connection (abort, which observe logs once, at warn, with the reason).
func guardStreams(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ex := exchangeOf(r.Context())
		g := &ex.guard
		ex.gw = guardedWriter{ResponseWriter: w, guard: g}
		gw := &ex.gw
		next.ServeHTTP(gw, r)
		failed := g.failed
		switch {
		case failed == nil && !g.opened:
			return // not a list
		case failed == nil && g.written == g.announced:
			// With no failure recorded, ForwardResponseStream returned at the stream's io.EOF,
			// which gRPC reports only for a call that ended with status OK, so the list is
			// complete; or because writing to the client failed, and then this goes nowhere.
			_, _ = gw.Write(g.end())
			return
		case failed == nil:
			failed = errors.New("list stream ended early")
		}
		failed = fmt.Errorf("streamed list failed after %d of the %d items it announced: %w", g.written, g.announced, failed)
		if clientGone(r) {
			return // nobody is left to answer or abort for; observe logs the hang-up
		}
		if !gw.wrote {
			log.ErrorContext(r.Context(), "request failed", slog.String("path", r.URL.Path), slog.String("error", failed.Error()))
			writeFailure(w, familyOfPath(r.URL.Path), failure{status: http.StatusInternalServerError, message: internalMessage})
			return
		}
		abort(failed) // the client must see a broken response, not a list that parses
	})
}

// guardedWriter drops what the runtime writes after a stream failed (its own error chunk, in no
// family's shape) and notes whether anything reached the client.
type guardedWriter struct {
	http.ResponseWriter
	guard *listGuard
	wrote bool
}

func (w *guardedWriter) WriteHeader(code int) {
	if w.guard.failed != nil {
		return
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *guardedWriter) Write(b []byte) (int, error) {
	if w.guard.failed != nil {
		return len(b), nil
	}
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (the runtime flushes each chunk).
func (w *guardedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
