-- Identity context schema. Ids minted by this service are UUIDs; API key ids are the 24-hex id part
-- of the key itself. tenant_id refers to the tenant service's tenants, so it is plain text ('' = none)
-- with no foreign key: each service owns its own database.

create table projects (
    id         uuid primary key,
    name       text not null,
    created_at timestamptz not null
);

create table apps (
    id                 uuid primary key,
    project_id         uuid not null references projects (id),
    name               text not null,
    enabled            boolean not null,
    redirect_uris      text[] not null default '{}',
    public_key_pem     text not null,
    -- AES-GCM sealed PKCS#8 private key; the plaintext never reaches the database.
    sealed_private_key bytea not null,
    created_at         timestamptz not null,
    updated_at         timestamptz not null
);

create index apps_project_id on apps (project_id);

create table api_keys (
    id          text primary key,
    app_id      uuid not null references apps (id),
    type        text not null check (type in ('read', 'write')),
    name        text not null,
    description text not null default '',
    -- HMAC-SHA256(pepper, secret); the secret itself is never stored.
    hash        bytea not null,
    created_at  timestamptz not null,
    updated_at  timestamptz not null
);

create index api_keys_app_id on api_keys (app_id);

create table users (
    id                            uuid primary key,
    app_id                        uuid not null references apps (id),
    tenant_id                     text not null default '',
    language                      text not null default '',
    salutation                    text not null default '',
    salutation_other              text not null default '',
    accepted_newsletter           boolean not null default false,
    accepted_newsletter_date      text not null default '',
    last_asked_newsletter_sign_up text not null default '',
    newsletter_member_id          text not null default '',
    name                          text not null default '',
    given_name                    text not null default '',
    family_name                   text not null default '',
    middle_name                   text not null default '',
    nickname                      text not null default '',
    preferred_username            text not null default '',
    profile                       text not null default '',
    picture                       text not null default '',
    website                       text not null default '',
    email                         text not null,
    email_verified                boolean not null default false,
    gender                        text not null default '',
    other_gender                  text not null default '',
    birthdate                     text not null default '',
    zoneinfo                      text not null default '',
    locale                        text not null default '',
    phone_number                  text not null default '',
    phone_number_verified         boolean not null default false,
    frozen                        boolean not null default false,
    deleted                       boolean not null default false,
    verified_by_admin             boolean not null default false,
    idp_a_email_verified          boolean not null default false,
    idp_b_email_verified          boolean not null default false,
    idp_c_email_verified          boolean not null default false,
    idp_d_email_verified          boolean not null default false,
    last_sign_in_at               timestamptz,
    last_sign_in_ip               text not null default '',
    created_at                    timestamptz not null,
    updated_at                    timestamptz not null
);

-- Emails are unique per app, case-insensitively (users sign in with them; route 14 looks them up).
create unique index users_app_email on users (app_id, lower(email));
create index users_app_tenant on users (app_id, tenant_id, created_at) where tenant_id <> '';

create table user_roles (
    id         uuid primary key,
    app_id     uuid not null references apps (id),
    name       text not null,
    created_at timestamptz not null
);

-- Role names are unique per app, case-insensitively.
create unique index user_roles_app_name on user_roles (app_id, lower(name));
