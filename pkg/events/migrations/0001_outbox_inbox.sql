-- Events written in the same transaction as the state change they describe. seq orders them: rows
-- written by one transaction share created_at.
create table outbox (
    seq          bigint generated always as identity,
    id           uuid primary key,
    type         text not null,
    source       text not null,
    app_id       text not null,
    time         timestamptz not null,
    data         jsonb not null,
    created_at   timestamptz not null default now(),
    published_at timestamptz
);
-- The relay only ever looks for unpublished rows, oldest first.
create index outbox_unpublished on outbox (seq) where published_at is null;

-- Events a consumer has applied, recorded in the transaction of the consumer's effect.
create table inbox (
    consumer     text not null,
    event_id     uuid not null,
    processed_at timestamptz not null default now(),
    primary key (consumer, event_id)
);
