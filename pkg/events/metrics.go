package events

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics of the event pipeline, on the process's default Prometheus registry (served at /metrics).
// Labels are bounded: relay names are services, consumer names are durables, outcomes are fixed.
var (
	relayPublished = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_outbox_published_total",
		Help: "Outbox events the relay published to JetStream.",
	}, []string{"relay"})
	relayErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_outbox_relay_errors_total",
		Help: "Relay passes that failed (database or NATS unavailable) and were retried.",
	}, []string{"relay"})
	outboxLag = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "berth_outbox_lag_seconds",
		Help: "Age of the oldest unpublished outbox event at the relay's last pass (0 when none).",
	}, []string{"relay"})
	consumed = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "berth_events_consumed_total",
		Help: "Events handled by durable consumers, by outcome: applied, duplicate (inbox hit), failed (redelivered later), undecodable (payload does not decode; acknowledged), malformed (acknowledged, never applicable), skipped (another type).",
	}, []string{"consumer", "outcome"})
)

// observeLag records how long the oldest of evs (oldest first, as Pending returns them) has waited.
func observeLag(relay string, evs []Event) {
	lag := 0.0
	if len(evs) > 0 {
		lag = max(time.Since(evs[0].Time).Seconds(), 0)
	}
	outboxLag.WithLabelValues(relay).Set(lag)
}
