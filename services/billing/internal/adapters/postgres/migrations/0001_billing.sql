-- Provider connections of apps. Secret keys and webhook secrets are sealed (AES-GCM) by the
-- service before they reach this table.
CREATE TABLE connections (
    id              uuid PRIMARY KEY,
    app_id          uuid NOT NULL,
    provider        text NOT NULL CHECK (provider IN ('pspx', 'pspy')),
    test_key        bytea,
    live_key        bytea,
    -- [{"id","test","sealed"(base64),"createdAt"}]: a few per connection, read and written whole.
    webhook_secrets jsonb NOT NULL DEFAULT '[]',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL
);
CREATE INDEX connections_app ON connections (app_id, created_at);

CREATE TABLE app_settings (
    app_id                      uuid PRIMARY KEY,
    connection_id               text NOT NULL DEFAULT '',
    payment_return_url          text NOT NULL DEFAULT '',
    failed_payments_to_freeze   integer NOT NULL,
    one_time_payment_valid_days integer NOT NULL,
    referral_promotion_id       text NOT NULL DEFAULT ''
);

CREATE TABLE catalog_prices (
    id           text PRIMARY KEY,
    app_id       uuid NOT NULL,
    product_name text NOT NULL,
    amount       bigint NOT NULL CHECK (amount > 0),
    currency     text NOT NULL,
    interval     text NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX catalog_prices_app ON catalog_prices (app_id, created_at);

CREATE TABLE catalog_tax_rates (
    id           text PRIMARY KEY,
    app_id       uuid NOT NULL,
    display_name text NOT NULL,
    basis_points integer NOT NULL,
    inclusive    boolean NOT NULL,
    created_at   timestamptz NOT NULL
);
CREATE INDEX catalog_tax_rates_app ON catalog_tax_rates (app_id, created_at);

CREATE TABLE promotions (
    id              uuid PRIMARY KEY,
    app_id          uuid NOT NULL,
    code            text NOT NULL,
    name            text NOT NULL,
    description     text NOT NULL,
    free_units      integer NOT NULL,
    free_days       integer NOT NULL,
    valid_from      timestamptz,
    valid_until     timestamptz,
    max_redemptions integer NOT NULL,
    redemptions     integer NOT NULL,
    active          boolean NOT NULL,
    created_at      timestamptz NOT NULL,
    UNIQUE (app_id, code),
    -- The last line of defence for maxRedemptions: even a bug in the locking cannot oversell.
    CHECK (max_redemptions = 0 OR redemptions <= max_redemptions)
);

-- One redemption per promotion and tenant.
CREATE TABLE redemptions (
    promotion_id uuid NOT NULL REFERENCES promotions (id),
    tenant_id    uuid NOT NULL,
    user_id      uuid NOT NULL,
    redeemed_at  timestamptz NOT NULL,
    PRIMARY KEY (promotion_id, tenant_id)
);

-- Tenants' billing accounts: the state billing decides, at a revision that grows with each change.
CREATE TABLE accounts (
    app_id     uuid NOT NULL,
    tenant_id  uuid NOT NULL,
    revision   bigint NOT NULL,
    state      jsonb NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id)
);
