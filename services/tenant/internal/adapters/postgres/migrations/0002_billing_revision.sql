-- The billing context's revision of a tenant's billing state: billing pushes its state after each
-- change and publishes it as an event; only a newer revision replaces the stored state.
ALTER TABLE tenants ADD COLUMN billing_revision bigint NOT NULL DEFAULT 0;
