// Package pgtest gives each test its own PostgreSQL database, cloned from a template that is migrated
// once, so tests run in parallel against a real server without seeing each other's rows. New hands
// the test a pool on it; URL hands its URL, for code under test that opens its own connections (a
// service started from its configuration).
//
// The server comes from TEST_DATABASE_URL, else a throwaway cluster started from the local PostgreSQL
// binaries, else a testcontainers-go container; without any of them tests are skipped (failed when
// CI=true). A package using pgtest should have
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// so that the throwaway cluster (or container) and the templates this process built are removed when
// the tests end.
package pgtest
