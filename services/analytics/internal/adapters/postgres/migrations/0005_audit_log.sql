-- The audit log: one row per event of any context, with who caused it (the envelope's actor),
-- what it targets and the names of the fields it changed. id is the event id.
create table analytics_audit_entries (
    id             uuid primary key,
    app_id         uuid not null,
    at             timestamptz not null,
    action         text not null,
    target_type    text not null,
    target_id      text not null,
    actor_kind     text not null,
    actor_id       text not null,
    actor_key_type text not null,
    request_id     text not null,
    client_address text not null,
    changed_fields text[] not null
);
-- The audit route reads one app's entries between two instants, newest first, and pruning deletes
-- by app and age.
create index analytics_audit_entries_app_at on analytics_audit_entries (app_id, at desc, id desc);

-- How many days each app's entries are kept; an app without a row keeps them 365 days.
create table analytics_audit_retention (
    app_id uuid primary key,
    days   integer not null check (days > 0)
);
