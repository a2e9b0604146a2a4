-- Project members (platform operators) and the deployment's operator signing key (route 2).

create table project_members (
    id         uuid primary key,
    project_id uuid not null references projects (id),
    email      text not null,
    name       text not null,
    created_at timestamptz not null
);

create unique index project_members_project_email on project_members (project_id, lower(email));

-- One row: the AES-GCM sealed PKCS#8 private key that signs operator tokens.
create table operator_keys (
    id                 smallint primary key check (id = 1),
    sealed_private_key bytea not null,
    created_at         timestamptz not null default now()
);
