// Package tracing is Berth's OpenTelemetry set-up and the carriers that take a trace across
// process boundaries. Every process calls Setup at start: with an OTLP endpoint in the standard
// OTEL_* variables it exports spans over OTLP/HTTP; without one (or with OTEL_SDK_DISABLED=true)
// the process neither records, exports nor propagates traces, and pays nothing for them per
// request (a trace passing through such a process ends there).
//
// A trace crosses the REST edge (Edge starts the request's span from its traceparent header),
// gRPC (otelgrpc's handlers, metadata), the outbox (the trace context of the transaction that
// writes an event is stored with it), JetStream (NATS message headers) and the consumer that
// applies the event (Consume starts its span as a child of the producer's).
package tracing
