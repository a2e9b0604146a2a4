-- An app's webhook endpoints. Secrets are sealed (pkg/sealbox) with the endpoint id as owner.
CREATE TABLE endpoints (
    id uuid PRIMARY KEY,
    app_id uuid NOT NULL,
    url text NOT NULL,
    events text[] NOT NULL,
    description text NOT NULL DEFAULT '',
    disabled boolean NOT NULL DEFAULT false,
    secret bytea NOT NULL,
    previous_secret bytea,
    previous_until timestamptz,
    -- When the endpoint's attempts began failing without a success since (NULL: its last attempt
    -- succeeded, or none was made); five days of it disable the endpoint.
    failing_since timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX endpoints_app ON endpoints (app_id, created_at, id);

-- One public event on its way to one endpoint; id is the webhook-id header.
CREATE TABLE deliveries (
    id uuid PRIMARY KEY,
    app_id uuid NOT NULL,
    endpoint_id uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
    type text NOT NULL,
    body bytea NOT NULL,
    status text NOT NULL,
    attempts int NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    lease_until timestamptz,
    created_at timestamptz NOT NULL
);
-- The claim reads pending deliveries by due time; finished ones leave the index.
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created_at DESC, id DESC);

CREATE TABLE delivery_attempts (
    delivery_id uuid NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
    at timestamptz NOT NULL,
    status int NOT NULL,
    response text NOT NULL,
    error text NOT NULL,
    duration_ms int NOT NULL
);
CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, at);
