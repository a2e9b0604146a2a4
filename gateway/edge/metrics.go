package edge

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/gateway/account"
	"github.com/berthhq/berth/gateway/console"
	"github.com/berthhq/berth/gateway/emailchange"
	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/recovery"
)

// HTTP metrics per route, on the process's default Prometheus registry. The route label is the
// resolved RPC's full method name, "login" for the hosted page, or "unmatched": never the raw
// path, which holds ids and would make the label set unbounded.
var (
	httpRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_http_requests_total",
		Help: "HTTP requests the edge answered, by route and status code (\"aborted\": broken off by the edge after it started; \"canceled\": the client hung up first).",
	}, []string{"route", "code"})
	httpDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "berth_http_request_duration_seconds",
		Help:    "Time the edge took to answer, by route.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"route"})
	backendCalls = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_edge_backend_calls_total",
		Help: "Calls the edge made to each backend service, by the gRPC code they ended with (Unavailable: the service could not be reached; Canceled: the edge's client hung up first).",
	}, []string{"backend", "code"})
)

func routeLabel(rpc, path string) string {
	switch {
	case rpc != "":
		return rpc
	case login.Serves(path):
		return "login"
	case path == account.Path || path == account.CallbackPath:
		return "account"
	case path == emailchange.Path:
		return "email-change"
	case console.Serves(path):
		return "console"
	case path == recovery.Path:
		return "recover"
	default:
		return "unmatched"
	}
}

// codeAborted is the code label of a response the edge broke off (see abort): its status line
// may have said 200, but the client never got a complete answer.
const codeAborted = "aborted"

// codeCanceled is the code label of a request whose client hung up before the answer was
// complete (clientGone): not an error of the edge's, so it stays out of every 5xx count.
const codeCanceled = "canceled"

// statusClientClosed is the status a trace records for such a request: the de facto 499 "client
// closed request", which no client ever receives and which is not a server error.
const statusClientClosed = 499

// observeHTTP records one answered request; code is its status code as text, or codeAborted.
func observeHTTP(route, code string, start time.Time) {
	httpDuration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	httpRequests.WithLabelValues(route, code).Inc()
}

// countedConn is a connection to one backend service that counts every call it carries under the
// service's name (berth_edge_backend_calls_total). The edge's readiness is its own, so it stays in
// its load balancer with a service down and only that service's routes fail; this counter is what
// says which service it is (its Unavailable calls), where the route counts only show 500s.
type countedConn struct {
	grpc.ClientConnInterface
	backend string
}

func (c countedConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	err := c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
	countBackendCall(c.backend, err)
	return err
}

// NewStream counts a stream once, when it ends: when it cannot be opened, or when the edge reads
// its end (io.EOF is a stream that ended OK).
func (c countedConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := c.ClientConnInterface.NewStream(ctx, desc, method, opts...)
	if err != nil {
		countBackendCall(c.backend, err)
		return nil, err
	}
	return &countedStream{ClientStream: s, backend: c.backend}, nil
}

// countedStream is a stream of a countedConn. gRPC allows one goroutine at a time to receive on a
// stream, so ended needs no lock.
type countedStream struct {
	grpc.ClientStream
	backend string
	ended   bool
}

func (s *countedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil && !s.ended {
		s.ended = true
		if errors.Is(err, io.EOF) {
			err = nil
		}
		countBackendCall(s.backend, err)
	}
	return err
}

func countBackendCall(backend string, err error) {
	code := codes.OK
	if err != nil {
		code = status.Code(err)
	}
	backendCalls.WithLabelValues(backend, code.String()).Inc()
}
