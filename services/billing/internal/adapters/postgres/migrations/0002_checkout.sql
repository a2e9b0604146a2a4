-- Provider customers Berth created, one per tenant, connection and mode. The provider's id is the
-- key: a provider event names the customer, and this finds its app and tenant.
CREATE TABLE customers (
    provider_customer_id text PRIMARY KEY,
    connection_id        uuid NOT NULL REFERENCES connections (id),
    app_id               uuid NOT NULL,
    tenant_id            uuid NOT NULL,
    test                 boolean NOT NULL,
    created_at           timestamptz NOT NULL,
    UNIQUE (connection_id, tenant_id, test)
);

-- Berth's checkout sessions (route 10). status moves from open to its outcome once, in the same
-- transaction as the tenant's account change it causes.
CREATE TABLE checkout_sessions (
    id                  uuid PRIMARY KEY,
    app_id              uuid NOT NULL,
    tenant_id           uuid NOT NULL,
    connection_id       uuid NOT NULL REFERENCES connections (id),
    provider            text NOT NULL CHECK (provider IN ('pspx', 'pspy')),
    test                boolean NOT NULL,
    mode                text NOT NULL CHECK (mode IN ('payment', 'subscription', 'setup')),
    price               text NOT NULL,
    tax_rate            text NOT NULL,
    quantity            bigint NOT NULL CHECK (quantity >= 0),
    method              text NOT NULL CHECK (method IN ('card', 'sepa')),
    customer_id         text NOT NULL,
    hash                text NOT NULL,
    state_hash          text NOT NULL,
    provider_session_id text NOT NULL,
    provider_url        text NOT NULL,
    status              text NOT NULL CHECK (status IN ('open', 'pending', 'completed', 'failed', 'cancelled')),
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE UNIQUE INDEX checkout_sessions_provider ON checkout_sessions (provider_session_id);
