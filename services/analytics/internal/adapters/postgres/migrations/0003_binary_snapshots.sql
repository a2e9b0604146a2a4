-- Snapshots are kept as binary protobuf (column pb) instead of protojson: decoding the user and
-- tenant snapshots was most of the cost of a listed item, and the binary form decodes about eight
-- times faster. Rows written before keep their protojson in data (read as before) until the next
-- event about them, or a rebuild, rewrites them; every write clears data.
alter table analytics_users add column pb bytea;
alter table analytics_tenants add column pb bytea;
alter table analytics_tenants alter column data drop not null;
