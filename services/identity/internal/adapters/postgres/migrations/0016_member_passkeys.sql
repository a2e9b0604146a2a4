-- Member accounts' passkeys are member factors of kind 'passkey' beside the one TOTP factor: an
-- account may hold several, each named by the member (name) and stamped when it last proved a
-- sign-in (last_used_at, kept for TOTP too). The TOTP factor stays one per account.
alter table member_factors add column kind text not null default 'totp'
    check (kind in ('totp', 'passkey'));
alter table member_factors add column name text not null default '';
alter table member_factors add column last_used_at timestamptz;
alter table member_factors drop constraint member_factors_account_id_key;
create unique index member_factors_account_totp on member_factors (account_id) where kind = 'totp';
create index member_factors_account on member_factors (account_id, created_at);
