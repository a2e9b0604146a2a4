-- Second factors (domain.Factor, domain.RecoveryCode) and an app's MFA policy (domain.MFAPolicy).
-- Apps that existed before the policy read 'optional', the default of new apps too; the column's
-- default is then dropped, since the application always writes the policy.
alter table apps add column mfa_policy text not null default 'optional'
    check (mfa_policy in ('off', 'optional', 'required'));
alter table apps alter column mfa_policy drop default;
-- Whether users may sign in with a passkey instead of the password (domain.App.PasskeySignIn).
alter table apps add column passkey_sign_in boolean not null default false;

-- A factor is pending until its first code confirms it (confirmed_at). The TOTP secret is sealed
-- by the application; last_step is the latest time step a code was accepted for (no replays).
create table second_factors (
    id            uuid primary key,
    app_id        uuid not null,
    user_id       uuid not null references users (id),
    kind          text not null check (kind in ('totp', 'passkey')),
    sealed_secret bytea not null,
    last_step     bigint not null default 0,
    created_at    timestamptz not null,
    confirmed_at  timestamptz
);

-- At most one TOTP factor per user, pending or confirmed; passkeys may be many.
create unique index second_factors_user_totp on second_factors (user_id) where kind = 'totp';
create index second_factors_user on second_factors (app_id, user_id);

-- Recovery codes: an HMAC of each code (domain.RecoveryCodeHash), single use.
create table recovery_codes (
    user_id    uuid not null references users (id),
    app_id     uuid not null,
    hash       bytea not null,
    created_at timestamptz not null,
    used_at    timestamptz,
    primary key (user_id, hash)
);

-- The authentication methods of a sign-in, carried by its code, its session and their tokens.
-- Codes and sessions from before second factors were all password sign-ins.
alter table auth_codes add column amr text[] not null default '{pwd}';
alter table refresh_families add column amr text[] not null default '{pwd}';

-- A second-factor challenge remembers what the sign-in proved before it (its first factor).
alter table challenges add column methods text[] not null default '{}';
-- ...and how it began: "email" (empty) or the identity provider's slot, for the app's redirect.
alter table challenges add column continue_service text not null default '';
