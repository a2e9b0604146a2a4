-- Attempts replace login_failures: every attempt (sign-in, sign-up, email change) is reserved
-- before its work and carries an id, so a sign-in that turns out correct can release exactly its
-- own reservation. The old rows were short-lived counters; dropping them forgets at most one
-- window of failures.
drop table login_failures;

-- key is SHA-256 of the limit key ("pair:<app>:<email>:<address>", "email:<app>:<email>",
-- "ip:<address>", "signup:<address>", "email-change:<app>:<user>"), so no address is stored in
-- clear text. One attempt has one row per key it counts under.
create table attempts (
    key bytea       not null,
    id  uuid        not null,
    at  timestamptz not null
);

create index attempts_key_at on attempts (key, at);
create index attempts_id on attempts (id);
