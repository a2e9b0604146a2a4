package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/testcontainers/testcontainers-go"
	tcpostgres "github.com/testcontainers/testcontainers-go/modules/postgres"
)

// containerImage matches the PostgreSQL major version of the development and CI machines.
const containerImage = "postgres:15-alpine"

// serverFor returns the server for this process, finding it on the first call: TEST_DATABASE_URL,
// else a throwaway cluster from local binaries, else a container. Without any, it skips t, or fails
// it when CI=true, where a silently skipped database suite would hide breakage.
func serverFor(t testing.TB) *server {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if srv != nil {
		return srv
	}
	if skipReason != "" {
		skipOrFail(t, skipReason)
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()

	url, stop, err := findServer(ctx)
	if errors.Is(err, errNoServer) {
		skipReason = err.Error()
		skipOrFail(t, skipReason)
	}
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	s, err := connect(ctx, url, stop)
	if err != nil {
		if stop != nil {
			stop()
		}
		t.Fatalf("pgtest: %v", err)
	}
	srv = s
	return srv
}

// FindServer finds a PostgreSQL server the way the tests do (TEST_DATABASE_URL, else a throwaway
// cluster from the local binaries, else a container), for programs outside `go test` that need one
// too, such as the whole-stack benchmark. stop removes a cluster or container it started and is nil
// for TEST_DATABASE_URL; the caller owns the databases it creates there.
func FindServer(ctx context.Context) (url string, stop func(), err error) {
	return findServer(ctx)
}

var errNoServer = errors.New("pgtest: no PostgreSQL: TEST_DATABASE_URL is unset, no binaries under /usr/lib/postgresql, and no healthy container provider")

func findServer(ctx context.Context) (url string, stop func(), err error) {
	if url := os.Getenv("TEST_DATABASE_URL"); url != "" {
		return url, nil, nil
	}
	if bin := localBinaries(); bin != "" {
		return startCluster(bin)
	}
	if err := containerProviderHealthy(ctx); err != nil {
		return "", nil, fmt.Errorf("%w (%v)", errNoServer, err)
	}
	return startContainer(ctx)
}

func skipOrFail(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(reason)
	}
	t.Skip(reason)
}

func connect(ctx context.Context, serverURL string, stop func()) (*server, error) {
	// Test databases are named by editing the URL's path (databaseURL), so a key=value DSN, which
	// pgx would accept, is refused here rather than on every test.
	if u, err := url.Parse(serverURL); err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("database url is not a URL (postgres://...)")
	}
	cfg, err := pgxpool.ParseConfig(serverURL)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	admin, err := pgxpool.NewWithConfig(ctx, cfg.Copy())
	if err != nil {
		return nil, fmt.Errorf("open admin pool: %w", err)
	}
	if err := admin.Ping(ctx); err != nil {
		admin.Close()
		return nil, fmt.Errorf("connect to %s:%d: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	return &server{url: serverURL, admin: admin, stop: stop}, nil
}

// localBinaries returns the bin directory of the newest PostgreSQL installed the Debian way, or "".
func localBinaries() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var best string
	bestVersion := -1
	for _, dir := range dirs {
		version, err := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		if err != nil || version <= bestVersion {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			best, bestVersion = dir, version
		}
	}
	return best
}

// startCluster runs initdb and pg_ctl start on a free port, with data and socket under one /tmp dir.
// PostgreSQL refuses to run as root, so as root the commands run as the postgres user.
func startCluster(bin string) (url string, stop func(), err error) {
	dir, err := os.MkdirTemp("/tmp", "berth-pgtest-")
	if err != nil {
		return "", nil, fmt.Errorf("create cluster dir: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	asPostgres := func(name string, args ...string) *exec.Cmd {
		return exec.Command(filepath.Join(bin, name), args...)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			cleanup()
			return "", nil, fmt.Errorf("running as root needs a postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("chown cluster dir: %w", err)
		}
		asPostgres = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, name)}, args...)...)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := asPostgres("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync").CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("initdb: %v: %s", err, trimOutput(out))
	}
	port, err := freePort()
	if err != nil {
		cleanup()
		return "", nil, err
	}
	// Durability settings are off: the cluster is thrown away, and fsync dominates test time otherwise.
	serverOpts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300", port, dir)
	logFile := filepath.Join(dir, "postgres.log")
	if out, err := asPostgres("pg_ctl", "-D", data, "-l", logFile, "-o", serverOpts, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(logFile)
		cleanup()
		return "", nil, fmt.Errorf("pg_ctl start: %v: %s %s", err, trimOutput(out), trimOutput(log))
	}
	stop = func() {
		_ = asPostgres("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop").Run()
		cleanup()
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), stop, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer func() { _ = l.Close() }() // it only found a port
	return l.Addr().(*net.TCPAddr).Port, nil
}

// containerProviderHealthy makes the check of testcontainers.SkipIfProviderIsNotHealthy, which only
// accepts a *testing.T and can only skip, whereas CI=true must turn a missing provider into a failure.
func containerProviderHealthy(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("container provider: %v", r)
		}
	}()
	provider, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return err
	}
	defer func() { _ = provider.Close() }()
	return provider.Health(ctx)
}

func startContainer(ctx context.Context) (url string, stop func(), err error) {
	c, err := tcpostgres.Run(ctx, containerImage,
		tcpostgres.WithUsername("postgres"),
		tcpostgres.WithPassword("postgres"),
		tcpostgres.WithDatabase("postgres"),
		tcpostgres.BasicWaitStrategies(),
	)
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", nil, fmt.Errorf("start postgres container: %w", err)
	}
	url, err = c.ConnectionString(ctx, "sslmode=disable")
	if err != nil {
		_ = testcontainers.TerminateContainer(c)
		return "", nil, fmt.Errorf("postgres container address: %w", err)
	}
	return url, func() { _ = testcontainers.TerminateContainer(c) }, nil
}
