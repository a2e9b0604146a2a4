-- Read models of routes 6, 7 and 9, built from billing's money events and tenant's events.

-- One row per subscription per app: the latest state billing reported of it (domain.Subscription).
create table analytics_subscriptions (
    app_id          uuid not null,
    subscription_id text not null,          -- the provider's id
    id              uuid not null,          -- the item id, derived from app and subscription id
    tenant_id       uuid not null,
    user_id         uuid,                   -- the payer; null when an API key started the checkout
    price_id        text not null default '',
    customer_id     text not null default '',
    test            boolean not null default false,
    paid            boolean not null default false,
    cancelled       boolean not null default false,
    until           timestamptz,
    revision        bigint not null default 0,
    ended_revision  bigint not null default 0,
    primary key (app_id, subscription_id)
);

-- The payments (first and renewals) of each subscription, once per payment key: they decide which
-- ranges list the subscription.
create table analytics_subscription_payments (
    app_id          uuid not null,
    subscription_id text not null,
    key             text not null,
    at              timestamptz not null,
    primary key (app_id, subscription_id, key)
);
-- Route 6 reads one app's payments between two instants.
create index analytics_subscription_payments_app_at on analytics_subscription_payments (app_id, at, subscription_id);

-- One row per one-time payment; id is the billing.payment.one_time event's id.
create table analytics_one_time_payments (
    id           uuid primary key,
    app_id       uuid not null,
    tenant_id    uuid not null,
    user_id      uuid,
    payment_id   text not null default '',
    price_id     text not null default '',
    customer_id  text not null default '',
    test         boolean not null default false,
    units        bigint not null,
    units_before bigint not null,
    at           timestamptz not null
);
create index analytics_one_time_payments_app_at on analytics_one_time_payments (app_id, at desc, id desc);

-- The UTC days on which each tenant was created or changed, once per day: route 9 lists a tenant
-- for every range holding one of them.
create table analytics_tenant_days (
    app_id    uuid not null,
    day       date not null,
    tenant_id uuid not null,
    primary key (app_id, day, tenant_id)
);

-- Tenant items list their users.
create index analytics_users_app_tenant on analytics_users (app_id, tenant_ref, id);
