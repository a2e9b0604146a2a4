-- Referral invites (route 23).

-- The inviter's user id when the user signed up with a referral code, '' otherwise.
alter table users add column referred_by text not null default '';

-- Codes are stored as SHA-256 of the 256-bit random code. Rows also count the inviter's invites
-- for the daily limit.
create table referrals (
    hash       bytea primary key,
    app_id     uuid not null,
    inviter_id uuid not null references users (id),
    created_at timestamptz not null,
    expires_at timestamptz not null
);

create index referrals_inviter_created on referrals (inviter_id, created_at);
