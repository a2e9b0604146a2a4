-- The console's tenant search (app.Store.SearchTenants): an app's live tenants by name prefix,
-- ordered by the lower-cased name, then id, a page at a time after a cursor. Under the "C"
-- collation the index's order is the bytes' order, of which a prefix is one range and after which
-- a cursor continues; a page is then one range scan of pageSize + 1 entries, however deep it is.
CREATE INDEX tenants_app_name_search ON tenants (app_id, (lower(name) COLLATE "C"), id) WHERE NOT deleted;
