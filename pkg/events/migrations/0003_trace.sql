-- The trace context (W3C traceparent, tracestate, baggage) of the transaction that wrote the
-- event, so the relay can carry it to JetStream and the consumer continue the trace. Null when
-- the writer was not traced.
alter table outbox add column trace jsonb;
