package edge

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/berthhq/berth/gateway/account"
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
