package grpcx

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Per-RPC metrics on the process's default Prometheus registry. The method label is the full gRPC
// method name, a bounded set: unknown methods never reach interceptors.
var (
	handled = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_grpc_server_handled_total",
		Help: "RPCs completed by the server, by method and gRPC status code.",
	}, []string{"method", "code"})
	handling = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "berth_grpc_server_handling_seconds",
		Help:    "Time the server took to answer an RPC, by method.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"method"})
)

// metrics counts every unary RPC with the code it answered, after the access policy and the handler.
func metrics(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	observe(info.FullMethod, start, err)
	return resp, err
}

// streamMetrics does the same for streaming RPCs, timed from open to close.
func streamMetrics(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	start := time.Now()
	err := h(srv, ss)
	observe(info.FullMethod, start, err)
	return err
}

func observe(method string, start time.Time, err error) {
	handling.WithLabelValues(method).Observe(time.Since(start).Seconds())
	handled.WithLabelValues(method, status.Code(err).String()).Inc()
}
