-- One check value per key a database's contents depend on (an HMAC of a fixed label under the key,
-- never the key itself), stored on the first start, so that a later start with another key is
-- refused before it answers 401s for every API key or fails to open sealed secrets.
create table key_checks (
    name       text primary key,
    check_value bytea not null,
    created_at timestamptz not null default now()
);
