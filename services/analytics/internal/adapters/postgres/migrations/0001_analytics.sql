-- Read models built from identity's and tenant's events. Table names carry the analytics_ prefix
-- because services may share one database (the all-in-one run).

-- One row per identity.user.signed_in event; id is the event id.
create table analytics_sign_ins (
    id         uuid primary key,
    app_id     uuid not null,
    user_id    uuid not null,
    tenant_ref uuid,          -- the user's tenant at sign-in time
    at         timestamptz not null,
    ip         text not null default ''
);
-- Route 8 reads one app's sign-ins between two instants, newest first.
create index analytics_sign_ins_app_at on analytics_sign_ins (app_id, at desc, id desc);

-- Latest user snapshot per (app, user); data is identity's TenantUser as protojson, null for a user
-- known only from its deletion. as_of is the time of the event the snapshot comes from.
create table analytics_users (
    app_id     uuid not null,
    id         uuid not null,
    tenant_ref uuid,
    deleted    boolean not null default false,
    as_of      timestamptz not null,
    data       jsonb,
    primary key (app_id, id)
);

-- Latest tenant snapshot per (app, tenant); data is tenant's Tenant as protojson.
create table analytics_tenants (
    app_id uuid not null,
    id     uuid not null,
    as_of  timestamptz not null,
    data   jsonb not null,
    primary key (app_id, id)
);
