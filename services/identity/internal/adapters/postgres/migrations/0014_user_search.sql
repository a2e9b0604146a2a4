-- The console's user search (app.Users.SearchUsers): an app's live users by email prefix, ordered
-- by the lower-cased email, then id, a page at a time after a cursor. Under the "C" collation the
-- index's order is the bytes' order, which a LIKE prefix turns into a range of, and the row
-- comparison of the cursor continues from; a page is then one range scan of pageSize + 1 entries,
-- however deep it is. (users_app_email, under the database's collation, serves neither.)
create index users_app_email_search on users (app_id, (lower(email) collate "C"), id) where not deleted;
