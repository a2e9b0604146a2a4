-- Charges Berth started at the provider on a tenant's default payment method: route 13's invoices
-- and subscriptions, route 19's upgrade invoices. status moves from open to its outcome once, in
-- the same transaction as the tenant's account change it causes.
CREATE TABLE charges (
    id              uuid PRIMARY KEY,
    app_id          uuid NOT NULL,
    tenant_id       uuid NOT NULL,
    connection_id   uuid NOT NULL REFERENCES connections (id),
    test            boolean NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('invoice', 'subscription', 'upgrade')),
    customer_id     text NOT NULL,
    price           text NOT NULL,
    tax_rate        text NOT NULL,
    quantity        bigint NOT NULL CHECK (quantity > 0),
    from_price      text NOT NULL,
    from_quantity   bigint NOT NULL CHECK (from_quantity >= 0),
    amount          bigint NOT NULL CHECK (amount >= 0),
    subscription_id text NOT NULL,
    invoice_id      text NOT NULL,
    status          text NOT NULL CHECK (status IN ('open', 'completed', 'failed')),
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
-- One open upgrade per subscription: a second plan change waits until the first is paid or failed.
CREATE UNIQUE INDEX charges_open_upgrade ON charges (subscription_id) WHERE kind = 'upgrade' AND status = 'open';
-- One subscription being created per tenant: two racing requests cannot both subscribe it.
CREATE UNIQUE INDEX charges_open_subscription ON charges (tenant_id) WHERE kind = 'subscription' AND status = 'open';
