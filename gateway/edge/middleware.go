package edge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/berthhq/berth/gateway/account"
	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/gateway/emailchange"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/recovery"
	"github.com/berthhq/berth/pkg/logx"
	"github.com/berthhq/berth/pkg/reqid"
	"github.com/berthhq/berth/pkg/tracing"
)

// maxBody is the request body limit. Bodies are small JSON documents; anything larger is refused
// before it is decoded.
const maxBody = 1 << 20

// withMiddleware wraps the mux, outermost first: body limit, request id (so every answer, errors
// and panics included, carries it), panic recovery with the access log, the canonical-path rule
// (paths.go), media-type check, input tracking (input.go: query text rule, body failures for the
// error handler). Every error answer, whoever wrote it, passes the recorder, which lets pages on
// any app's origin read it (origins, nil: no such header).
func withMiddleware(next http.Handler, log *slog.Logger, origins *anyAppOrigins) http.Handler {
	return limitBody(withRequestID(observe(log, origins, checkPath(checkMediaType(checkInput(next))))))
}

// limitBody caps the body. The limit is hit while grpc-gateway decodes the body, so the resulting
// 400 is rendered by the error handler in the family of the resolved route.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		next.ServeHTTP(w, r)
	})
}

// withRequestID accepts the caller's X-Request-Id when it is safe to log, mints one otherwise, and
// puts it on the response and in the request context (from where it is forwarded to the services).
// The request's exchange enters the context here too, so the request is copied once for both.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := reqid.Accept(r.Header.Get(reqid.Header))
		w.Header().Set(reqid.Header, id)
		ctx := context.WithValue(reqid.With(r.Context(), id), exchangeKey{}, &exchange{})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// withClientAddress records the caller's address in the request's exchange, read the way the
// login page reads it (the TCP peer, or X-Forwarded-For through trusted proxies), so every backend
// call forwards it (withCallMetadata) and the events the call causes name where it came from.
func withClientAddress(trusted []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exchangeOf(r.Context()).client = login.ClientIP(r, trusted)
		next.ServeHTTP(w, r)
	})
}

// exchange is what the edge's middleware and the mux's hooks learn about one request and tell each
// other: the resolved RPC, the input check's findings, the Origin to confirm, the streamed list's
// guard. One value in the request context holds it all, so the request is not copied and the
// context not extended once per middleware.
type exchange struct {
	rpc    string // the resolved RPC's full name, once a backend call or the error handler saw it
	client string // the caller's address (withClientAddress), forwarded to the services for the audit log
	input  input
	origin string // the request's Origin header, on a request that is not a preflight
	guard  listGuard
	rec    recorder
	gw     guardedWriter
}

type exchangeKey struct{}

// exchangeOf is the request's exchange; a context that did not pass withRequestID (a handler
// tested without the middleware) gets a throwaway one, so a hook never has to check.
func exchangeOf(ctx context.Context) *exchange {
	if ex, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		return ex
	}
	return &exchange{}
}

// resolved records the RPC that the runtime resolved for the request, for the access log and the
// metrics.
func resolved(ctx context.Context) {
	if method, ok := runtime.RPCMethod(ctx); ok {
		exchangeOf(ctx).rpc = method
	}
}

// acceptedMediaType reports whether a request body of this Content-Type may be decoded as JSON.
// text/plain and a missing Content-Type are accepted because a published client sends JSON that
// way; the decoder still rejects a body that is not JSON.
func acceptedMediaType(contentType string) bool {
	if contentType == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil && !errors.Is(err, mime.ErrInvalidMediaParameter) {
		return false // a broken parameter still leaves a usable media type; a broken type does not
	}
	return mt == "application/json" || mt == "text/plain"
}

// checkMediaType refuses a body of any other media type with a 400. No RPC is resolved yet, so the
// answer takes the family of the path. The hosted pages with forms (browsers post them
// url-encoded) and route 4 (pspy posts form-encoded) are the exceptions; each reads its media
// type itself.
func checkMediaType(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ContentLength is 0 only for a request known to have no body; -1 (chunked) may carry one.
		if r.ContentLength != 0 && !ownMediaType(r.URL.Path) {
			contentType := r.Header.Get("Content-Type")
			if !acceptedMediaType(contentType) {
				writeFailure(w, familyOfPath(r.URL.Path), failure{
					status:     http.StatusBadRequest,
					message:    "unsupported Content-Type: send application/json",
					validation: "Content-Type",
				})
				return
			}
			// A JSON body with a broken parameter ("application/json; charset") is accepted, but the
			// gateway's form parsing, which runs for every route that also reads query parameters,
			// would refuse the header: it gets the bare media type instead.
			if mt, _, err := mime.ParseMediaType(contentType); errors.Is(err, mime.ErrInvalidMediaParameter) {
				r.Header.Set("Content-Type", mt)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// ownMediaType reports whether the path's handler reads its body's media type itself.
func ownMediaType(path string) bool {
	return login.Serves(path) || path == recovery.Path || path == emailchange.Path || path == account.Path || console.Serves(path) || path == PspyWebhookPath
}

// observe recovers panics into a 500 in the path's family and writes one access-log line per
// request. The line names method, path, status, duration and request id only: headers and bodies
// carry API keys, tokens and personal data. A response broken off with abort (or a bare
// http.ErrAbortHandler) is logged instead as one "http request aborted" warning, and the panic
// goes on to net/http, which closes the connection.
func observe(log *slog.Logger, origins *anyAppOrigins, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ex := exchangeOf(r.Context())
		ex.rec = recorder{ResponseWriter: w}
		if origins != nil && r.Header.Get("Origin") != "" {
			ex.rec.beforeError = func(h http.Header) { origins.confirmError(r, h) }
		}
		rec := &ex.rec
		rpc := &ex.rpc // filled in once grpc-gateway resolves the route (resolved)
		ctx, span := tracing.Edge(r)
		if ctx != r.Context() {
			r = r.WithContext(ctx)
		}
		defer func() {
			if p := recover(); p != nil {
				if err, ok := p.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					// The handler broke the response off on purpose (a streamed list that went
					// wrong after its first bytes): the client sees a broken connection, so this
					// request is logged as aborted, at warn, instead of with an access line
					// whose status would claim the 200 already sent, or a 500 never sent.
					attrs := []slog.Attr{
						slog.String("method", r.Method),
						slog.String("path", r.URL.Path),
						slog.Int("status_sent", rec.statusOr200()),
						logx.Duration(time.Since(start)),
					}
					var a aborted
					if errors.As(err, &a) {
						attrs = append(attrs, slog.String("reason", a.reason.Error()))
					}
					log.LogAttrs(ctx, slog.LevelWarn, "http request aborted", attrs...)
					observeHTTP(routeLabel(*rpc, r.URL.Path), codeAborted, start)
					tracing.EndHTTP(span, r.Method, routeLabel(*rpc, r.URL.Path), http.StatusInternalServerError)
					// net/http stays silent only for the sentinel itself (it compares by identity).
					panic(http.ErrAbortHandler)
				}
				log.ErrorContext(ctx, "panic serving request",
					slog.String("panic", fmt.Sprint(p)),
					slog.String("stack", string(debug.Stack())))
				if !rec.wrote {
					writeFailure(rec, familyOfPath(r.URL.Path), failure{status: http.StatusInternalServerError, message: internalMessage})
				}
			}
			if clientGone(r) {
				// The client hung up before the answer was complete: nothing went wrong on this
				// side, and whatever status the handler chose never reached anyone. One info line
				// and the "canceled" code keep it out of error logs, error counts and error spans.
				observeHTTP(routeLabel(*rpc, r.URL.Path), codeCanceled, start)
				tracing.EndHTTP(span, r.Method, routeLabel(*rpc, r.URL.Path), statusClientClosed)
				log.LogAttrs(ctx, slog.LevelInfo, "http request canceled by the client",
					slog.String("method", r.Method),
					slog.String("path", r.URL.Path),
					logx.Duration(time.Since(start)))
				return
			}
			observeHTTP(routeLabel(*rpc, r.URL.Path), strconv.Itoa(rec.statusOr200()), start)
			tracing.EndHTTP(span, r.Method, routeLabel(*rpc, r.URL.Path), rec.statusOr200())
			// The request id comes from ctx (pkg/logx adds it to every record), once.
			log.LogAttrs(ctx, slog.LevelInfo, "http request",
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rec.statusOr200()),
				logx.Duration(time.Since(start)))
		}()
		next.ServeHTTP(rec, r)
	})
}

// clientGone reports whether r's client went away before the edge finished with it: net/http
// cancels a request's context when its connection closes (or its HTTP/2 stream is reset), and the
// edge sets no deadline of its own, so while the handler runs a done context means exactly that.
func clientGone(r *http.Request) bool { return r.Context().Err() != nil }

// abort ends the response by aborting the connection (http.ErrAbortHandler), telling observe why.
// It is for a response that has started and cannot end well: ending it normally would hand the
// client a body that looks complete. It never returns.
func abort(reason error) {
	panic(aborted{reason})
}

// aborted is abort's panic value: http.ErrAbortHandler with its reason.
type aborted struct{ reason error }

func (a aborted) Error() string   { return "response aborted: " + a.reason.Error() }
func (a aborted) Unwrap() []error { return []error{http.ErrAbortHandler, a.reason} }

// recorder remembers the status written, for the access log and so recovery knows whether an
// error body can still be sent.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	// beforeError completes an error answer's headers before they are sent (CORS for any app's
	// origin); nil on a request without Origin.
	beforeError func(http.Header)
}

func (rec *recorder) WriteHeader(code int) {
	if !rec.wrote {
		rec.status, rec.wrote = code, true
		if code >= http.StatusBadRequest && rec.beforeError != nil {
			rec.beforeError(rec.Header())
		}
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if !rec.wrote {
		rec.status, rec.wrote = http.StatusOK, true
	}
	return rec.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (flush, deadlines).
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// statusOr200 is the status sent; a handler that wrote nothing has answered 200.
func (rec *recorder) statusOr200() int {
	if !rec.wrote {
		return http.StatusOK
	}
	return rec.status
}
