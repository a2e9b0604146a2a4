// Package latency reports a benchmark's per-call latency percentiles beside its mean (ns/op). A
// page that must answer within a bound for nearly every request (the console's lists: p99 ≤ 100 ms)
// is judged by its tail, which a mean hides: one slow call in a hundred barely moves ns/op.
package latency
