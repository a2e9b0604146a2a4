package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// templateLockKey is the advisory lock (on the server's postgres database) that test processes take
// while they look for or build a template: the ASCII bytes of "berthtpl".
const templateLockKey int64 = 0x626572746874706c

// setupTimeout bounds every server-side step of New; a test database is normally ready in tens of ms.
const setupTimeout = 2 * time.Minute

var (
	mu         sync.Mutex
	srv        *server               // the server this process uses, found on the first New
	skipReason string                // why there is no server, once known
	templates  = map[string]string{} // name -> template database name, for this process
	built      []string              // templates this process created, dropped by Main
	binaryHash string
)

// server is a PostgreSQL server and an admin pool on its postgres database.
type server struct {
	url   string // the server's URL, as found
	admin *pgxpool.Pool
	stop  func() // removes a throwaway cluster or container; nil for TEST_DATABASE_URL
}

// New returns a pool on a fresh database for this test only, cloned from a template database built
// by migrate once per name and test binary (see templateName). The database is dropped in t.Cleanup.
func New(t testing.TB, name string, migrate func(ctx context.Context, pool *pgxpool.Pool) error) *pgxpool.Pool {
	t.Helper()
	s := serverFor(t)
	db := s.testDatabase(t, name, migrate)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	pool, err := s.open(ctx, db)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(pool.Close) // runs before the drop, which was registered first
	return pool
}

// URL is New for code under test that opens its own connections from a URL (a service's
// configuration): it returns the URL of a fresh database like New's, without a pool of the test's
// own holding connections to it. The database is dropped in t.Cleanup.
func URL(t testing.TB, name string, migrate func(ctx context.Context, pool *pgxpool.Pool) error) string {
	t.Helper()
	s := serverFor(t)
	return s.databaseURL(s.testDatabase(t, name, migrate))
}

// testDatabase clones a database for t from the template for name and drops it in t.Cleanup.
func (s *server) testDatabase(t testing.TB, name string, migrate func(context.Context, *pgxpool.Pool) error) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	db := "test_" + randomHex(8)
	if err := s.clone(ctx, name, migrate, db); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		// with (force): code under test may not have closed every connection it opened.
		if _, err := s.admin.Exec(ctx, "drop database if exists "+ident(db)+" with (force)"); err != nil {
			t.Errorf("pgtest: drop %s: %v", db, err)
		}
	})
	return db
}

// Main runs the tests, then drops the templates this process built and stops a throwaway cluster or
// container it started, and exits with the tests' status.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		for _, tpl := range built {
			// Another process running the same binary may still clone it; it then builds it again.
			_, _ = srv.admin.Exec(ctx, "drop database if exists "+ident(tpl))
		}
		cancel()
		srv.admin.Close()
		if srv.stop != nil {
			srv.stop()
		}
	}
	mu.Unlock()
	os.Exit(code)
}

// clone creates db from the template for name, building the template first when needed.
func (s *server) clone(ctx context.Context, name string, migrate func(context.Context, *pgxpool.Pool) error, db string) error {
	tpl, err := s.template(ctx, name, migrate)
	if err != nil {
		return err
	}
	_, err = s.admin.Exec(ctx, "create database "+ident(db)+" template "+ident(tpl))
	if isCode(err, "3D000") {
		// The template was dropped by the process that built it (see Main): build it again.
		mu.Lock()
		delete(templates, name)
		mu.Unlock()
		if tpl, err = s.template(ctx, name, migrate); err != nil {
			return err
		}
		_, err = s.admin.Exec(ctx, "create database "+ident(db)+" template "+ident(tpl))
	}
	if err != nil {
		return fmt.Errorf("create %s from %s: %w", db, tpl, err)
	}
	return nil
}

// template returns the template database for name, creating and migrating it unless this process or
// another one already did. The advisory lock makes concurrent test processes build it once; it is
// built under a temporary name and renamed when complete, so a process that dies half-way never
// leaves a half-migrated template behind for others to reuse.
func (s *server) template(ctx context.Context, name string, migrate func(context.Context, *pgxpool.Pool) error) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if tpl, ok := templates[name]; ok {
		return tpl, nil
	}
	tpl, err := templateName(name)
	if err != nil {
		return "", err
	}
	conn, err := s.admin.Acquire(ctx)
	if err != nil {
		return "", fmt.Errorf("acquire admin connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "select pg_advisory_lock($1)", templateLockKey); err != nil {
		return "", fmt.Errorf("lock templates: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "select pg_advisory_unlock($1)", templateLockKey); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx)) // closing the session releases the lock
		}
	}()

	var exists bool
	if err := conn.QueryRow(ctx, "select exists (select 1 from pg_database where datname = $1)", tpl).Scan(&exists); err != nil {
		return "", fmt.Errorf("look for template %s: %w", tpl, err)
	}
	if !exists {
		if err := s.build(ctx, conn.Conn(), tpl, migrate); err != nil {
			return "", fmt.Errorf("build template %q: %w", name, err)
		}
		built = append(built, tpl)
	}
	templates[name] = tpl
	return tpl, nil
}

func (s *server) build(ctx context.Context, admin *pgx.Conn, tpl string, migrate func(context.Context, *pgxpool.Pool) error) error {
	tmp := tpl + "_build"
	if _, err := admin.Exec(ctx, "drop database if exists "+ident(tmp)+" with (force)"); err != nil {
		return err
	}
	if _, err := admin.Exec(ctx, "create database "+ident(tmp)); err != nil {
		return err
	}
	pool, err := s.open(ctx, tmp)
	if err != nil {
		return err
	}
	err = migrate(ctx, pool)
	pool.Close() // a database with sessions can be neither renamed nor cloned
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	_, err = admin.Exec(ctx, "alter database "+ident(tmp)+" rename to "+ident(tpl))
	return err
}

// open connects to database db of the server.
func (s *server) open(ctx context.Context, db string) (*pgxpool.Pool, error) {
	// Parse a URL naming db (rather than editing a copied config) so that the pool's ConnString
	// names the clone: tests hand it to code that opens its own connections, which must never
	// land in the server's shared database.
	cfg, err := pgxpool.ParseConfig(s.databaseURL(db))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", db, err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", db, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", db, err)
	}
	return pool, nil
}

// databaseURL is the server's URL with db as its database. connect checked that the URL parses.
func (s *server) databaseURL(db string) string {
	u, _ := url.Parse(s.url)
	u.Path = "/" + db
	return u.String()
}

// templateName is "tpl_<hash of name>_<hash of the test binary>". Migrations are embedded in the
// binary, so a rebuilt binary with changed migrations gets a new template instead of reusing a
// stale one, while processes running the same binary share one.
func templateName(name string) (string, error) {
	if binaryHash == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find test binary: %w", err)
		}
		f, err := os.Open(exe)
		if err != nil {
			return "", fmt.Errorf("hash test binary: %w", err)
		}
		defer func() { _ = f.Close() }() // only read
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return "", fmt.Errorf("hash test binary: %w", err)
		}
		binaryHash = hex.EncodeToString(h.Sum(nil))
	}
	nameHash := sha256.Sum256([]byte(name))
	return "tpl_" + hex.EncodeToString(nameHash[:])[:12] + "_" + binaryHash[:12], nil
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

func isCode(err error, code string) bool {
	var pgErr interface{ SQLState() string }
	return errors.As(err, &pgErr) && pgErr.SQLState() == code
}

// trimOutput shortens a command's output for an error message.
func trimOutput(out []byte) string {
	s := strings.TrimSpace(string(out))
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}
