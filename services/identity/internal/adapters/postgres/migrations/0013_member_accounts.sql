-- The console's member accounts (domain.MemberAccount): one per person, keyed by the normalised
-- email, with one password across the projects whose membership (project_members) they accepted.
create table member_accounts (
    id            uuid primary key,
    email         text not null,
    name          text not null,
    password_hash text not null,
    created_at    timestamptz not null
);

create unique index member_accounts_email on member_accounts (email);

-- A membership records the account that accepted it, and when.
alter table project_members add column account_id uuid references member_accounts (id);
alter table project_members add column accepted_at timestamptz;
create index project_members_account on project_members (account_id) where account_id is not null;
create index project_members_project on project_members (project_id, created_at);

-- Invitations: the SHA-256 of the link's token, single use, valid for a week.
create table member_invitations (
    hash       bytea primary key,
    member_id  uuid not null references project_members (id),
    project_id uuid not null references projects (id),
    email      text not null,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    used_at    timestamptz
);

create index member_invitations_member on member_invitations (member_id);

-- Console sessions: operator tokens name one (sid) and verify only while it is live.
create table member_sessions (
    id           uuid primary key,
    account_id   uuid not null references member_accounts (id),
    member_id    uuid not null references project_members (id),
    created_at   timestamptz not null,
    last_used_at timestamptz not null,
    expires_at   timestamptz not null,
    ended_at     timestamptz,
    client_ip    text not null,
    user_agent   text not null
);

create index member_sessions_account on member_sessions (account_id);

-- Sign-ins waiting for their second factor: the SHA-256 of the challenge's secret.
create table member_challenges (
    id          uuid primary key,
    hash        bytea not null unique,
    account_id  uuid not null references member_accounts (id),
    member_id   uuid not null references project_members (id),
    created_at  timestamptz not null,
    expires_at  timestamptz not null,
    used_at     timestamptz,
    wrong_codes integer not null default 0
);

create index member_challenges_expires on member_challenges (expires_at);

-- An account's TOTP factor (sealed by the application, like users' factors) and recovery codes.
create table member_factors (
    id            uuid primary key,
    account_id    uuid not null unique references member_accounts (id),
    sealed_secret bytea not null,
    last_step     bigint not null default 0,
    created_at    timestamptz not null,
    confirmed_at  timestamptz
);

create table member_recovery_codes (
    account_id uuid not null references member_accounts (id),
    hash       bytea not null,
    created_at timestamptz not null,
    used_at    timestamptz,
    primary key (account_id, hash)
);

-- Revoked API keys stay for the record but never verify again.
alter table api_keys add column revoked_at timestamptz;
