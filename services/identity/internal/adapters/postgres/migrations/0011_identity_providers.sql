-- The apps' identity-provider slots (domain.IdentityProvider) and the provider identities linked
-- to users (domain.ProviderLink). The client secret is sealed (sealbox); null for a public client.
create table identity_providers (
    app_id          uuid        not null references apps (id),
    slot            text        not null check (slot in ('idpA', 'idpB', 'idpC', 'idpD')),
    display_name    text        not null,
    discovery_url   text        not null,
    issuer          text        not null,
    auth_url        text        not null,
    token_url       text        not null,
    userinfo_url    text        not null,
    jwks_url        text        not null,
    client_id       text        not null,
    sealed_secret   bytea,
    scopes          text[]      not null,
    allowed_domains text[]      not null,
    created_at      timestamptz not null,
    updated_at      timestamptz not null,
    primary key (app_id, slot)
);

-- A provider identity signs in one user, and a user has at most one identity per slot. Links
-- outlive their slot's configuration (clearing a slot and setting it again keeps its users).
create table provider_links (
    app_id     uuid        not null references apps (id),
    slot       text        not null check (slot in ('idpA', 'idpB', 'idpC', 'idpD')),
    subject    text        not null,
    user_id    uuid        not null references users (id),
    email      text        not null,
    created_at timestamptz not null,
    primary key (app_id, slot, subject),
    constraint provider_links_user_slot unique (user_id, slot)
);
