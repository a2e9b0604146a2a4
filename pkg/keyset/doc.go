// Package keyset holds the one paging rule of the console's searches (identity's users, tenant's
// tenants): a query is an exact id or a case-insensitive prefix of the sort text, pages hold 1–100
// rows (25 unless asked), and a page ends with an opaque cursor naming its last row's sort key, so
// the next page starts after that row with an index range scan.
//
// Why keyset and never OFFSET: an OFFSET page reads and drops every row before it, so the 4,000th
// page of 25 costs 100,000 rows, and rows inserted meanwhile shift every later page (a row shown
// twice, another never). A cursor is a position in the (text, id) order instead: its page costs
// the same anywhere in the list, and inserts before it change nothing after it.
//
// The cursor is base64url of the key: not secret (it names only what its page showed) and not
// signed (a forged one is merely another position in the caller's own app's list), but opaque so
// that clients do not build on its shape.
//
// A list read newest first (analytics' audit log) pages by the same rule over (time, id)
// descending: Newest is its position and cursor.
package keyset
