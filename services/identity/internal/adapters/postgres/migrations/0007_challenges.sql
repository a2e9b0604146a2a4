-- The challenges of verification, password-reset and email-change mails. The link secret is
-- stored as its SHA-256, the code as an HMAC under a server key (domain.Challenge).
create table challenges (
    id                    uuid primary key,
    app_id                uuid not null,
    user_id               uuid not null references users (id),
    purpose               text not null,
    email                 text not null,
    link_hash             bytea not null unique,
    code_hash             bytea not null,
    code_attempts         integer not null default 0,
    continue_client_id    text not null default '',
    continue_redirect_uri text not null default '',
    continue_state        text not null default '',
    continue_nonce        text not null default '',
    continue_scope        text not null default '',
    created_at            timestamptz not null,
    expires_at            timestamptz not null,
    used_at               timestamptz
);

-- A new challenge retires the live ones of its user and purpose.
create index challenges_user_purpose on challenges (user_id, purpose) where used_at is null;
create index challenges_expires on challenges (expires_at);
