-- Every provider call received, kept as received (raw body and the headers that matter) with what
-- became of it. dedupe_key (pspx's event id) recognises a redelivered event; pspy calls have none.
CREATE TABLE webhook_events (
    id                uuid PRIMARY KEY,
    provider          text NOT NULL CHECK (provider IN ('pspx', 'pspy')),
    provider_event_id text NOT NULL,
    dedupe_key        text,
    type              text NOT NULL,
    connection_id     text NOT NULL,
    test              boolean NOT NULL,
    body              bytea NOT NULL,
    content_type      text NOT NULL,
    signature         text NOT NULL,
    host              text NOT NULL,
    outcome           text NOT NULL CHECK (outcome IN ('received', 'applied', 'ignored', 'failed')),
    attempts          integer NOT NULL,
    last_error        text NOT NULL,
    effect            text NOT NULL,
    received_at       timestamptz NOT NULL,
    applied_at        timestamptz,
    UNIQUE (provider, dedupe_key)
);
CREATE INDEX webhook_events_received ON webhook_events (received_at DESC, id);
CREATE INDEX webhook_events_connection ON webhook_events (connection_id, received_at DESC);
