-- Sign-in, authorization codes, refresh tokens and attempt limits.

alter table apps
    add column access_token_ttl_seconds  integer not null default 900,
    add column refresh_token_ttl_seconds integer not null default 2592000;

-- argon2id PHC string; '' = the user has no password (provisioned by an operator).
alter table users add column password_hash text not null default '';

-- A deleted user frees the address: only live users must have distinct emails.
drop index users_app_email;
create unique index users_app_email on users (app_id, lower(email)) where not deleted;
create index users_app_email_all on users (app_id, lower(email));

-- Codes and refresh tokens are stored as SHA-256 of the 256-bit random secret.
create table auth_codes (
    hash         bytea primary key,
    app_id       uuid not null,
    user_id      uuid not null references users (id),
    redirect_uri text not null,
    nonce        text not null,
    scope        text not null,
    auth_time    timestamptz not null,
    created_at   timestamptz not null,
    expires_at   timestamptz not null
);

create index auth_codes_expires_at on auth_codes (expires_at);

create table refresh_families (
    id           uuid primary key,
    app_id       uuid not null,
    user_id      uuid not null references users (id),
    redirect_uri text not null,
    scope        text not null,
    auth_time    timestamptz not null,
    created_at   timestamptz not null,
    revoked      boolean not null default false
);

create index refresh_families_user on refresh_families (app_id, user_id);

create table refresh_tokens (
    hash       bytea primary key,
    family_id  uuid not null references refresh_families (id) on delete cascade,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    used_at    timestamptz
);

create index refresh_tokens_family on refresh_tokens (family_id);

-- Failed sign-ins per key (SHA-256 of "email:<app>:<address>" or "ip:<address>": no addresses in
-- clear text).
create table login_failures (
    key bytea not null,
    at  timestamptz not null
);

create index login_failures_key_at on login_failures (key, at);
