-- Purge deletes published outbox rows and inbox rows by age; these indexes keep each of its
-- batches from scanning the whole table.
create index outbox_published on outbox (published_at) where published_at is not null;
create index inbox_processed on inbox (processed_at);
