package module

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolStats exports a module's connection pool statistics on /metrics, labelled with the module.
type poolStats struct {
	pool    *pgxpool.Pool
	labels  prometheus.Labels
	desc    map[string]*prometheus.Desc
	removed bool
}

var poolMetrics = map[string]string{
	"berth_db_pool_connections":          "Connections in the pool, idle or in use.",
	"berth_db_pool_connections_acquired": "Connections currently in use.",
	"berth_db_pool_connections_max":      "The pool's connection limit.",
	"berth_db_pool_acquires_total":       "Connections acquired from the pool since it opened.",
	"berth_db_pool_acquire_waits_total":  "Acquires that had to wait for a connection (pool exhausted).",
	"berth_db_pool_acquire_seconds":      "Total time spent acquiring connections.",
}

// watchPool registers pool's statistics. A second process of the same module in one registry (two
// test services) keeps the first registration: the metric names are per module, not per pool.
func watchPool(module string, pool *pgxpool.Pool) *poolStats {
	s := &poolStats{pool: pool, labels: prometheus.Labels{"module": module}, desc: map[string]*prometheus.Desc{}}
	for name, help := range poolMetrics {
		s.desc[name] = prometheus.NewDesc(name, help, nil, s.labels)
	}
	if prometheus.Register(s) != nil {
		s.removed = true
	}
	return s
}

func (s *poolStats) unregister() {
	if !s.removed {
		prometheus.Unregister(s)
		s.removed = true
	}
}

// Describe implements prometheus.Collector.
func (s *poolStats) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range s.desc {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (s *poolStats) Collect(ch chan<- prometheus.Metric) {
	st := s.pool.Stat()
	for name, v := range map[string]struct {
		t prometheus.ValueType
		v float64
	}{
		"berth_db_pool_connections":          {prometheus.GaugeValue, float64(st.TotalConns())},
		"berth_db_pool_connections_acquired": {prometheus.GaugeValue, float64(st.AcquiredConns())},
		"berth_db_pool_connections_max":      {prometheus.GaugeValue, float64(st.MaxConns())},
		"berth_db_pool_acquires_total":       {prometheus.CounterValue, float64(st.AcquireCount())},
		"berth_db_pool_acquire_waits_total":  {prometheus.CounterValue, float64(st.EmptyAcquireCount())},
		"berth_db_pool_acquire_seconds":      {prometheus.CounterValue, st.AcquireDuration().Seconds()},
	} {
		ch <- prometheus.MustNewConstMetric(s.desc[name], v.t, v.v)
	}
}
