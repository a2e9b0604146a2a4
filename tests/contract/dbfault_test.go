package contract

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/services/sandbox/mount"
)

// refusalBound is how long a request may take to be refused while its service's database is
// gone: far below the calls' 30 s deadline, so nothing hangs until it.
const refusalBound = 5 * time.Second

// databaseSwitch takes one module's database away (no new connections, every open one ended) and
// gives it back, as a PostgreSQL restart or failover does to the module.
type databaseSwitch struct {
	t     *testing.T
	admin *pgx.Conn
	db    string
}

func newDatabaseSwitch(t *testing.T, url string) *databaseSwitch {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	db := cfg.Database
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &databaseSwitch{t: t, admin: admin, db: db}
	t.Cleanup(func() {
		s.exec("alter database " + pgx.Identifier{db}.Sanitize() + " allow_connections true")
		_ = admin.Close(context.Background())
	})
	return s
}

func (s *databaseSwitch) exec(sql string, args ...any) {
	s.t.Helper()
	if _, err := s.admin.Exec(context.Background(), sql, args...); err != nil {
		s.t.Fatalf("%s: %v", sql, err)
	}
}

func (s *databaseSwitch) gone() {
	s.t.Helper()
	s.exec("alter database " + pgx.Identifier{s.db}.Sanitize() + " allow_connections false")
	s.exec("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1", s.db)
}

func (s *databaseSwitch) back() {
	s.t.Helper()
	s.exec("alter database " + pgx.Identifier{s.db}.Sanitize() + " allow_connections true")
}

// ready is the stack's /readyz status.
func (e *env) ready(t *testing.T) int {
	t.Helper()
	res, err := http.Get(e.stack.BaseURL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// TestEveryServiceRefusesFastWhileItsDatabaseIsGoneAndRecoversWithoutARestart takes each
// service's own database away in turn under the running stack: a route the service answers
// from its database gets a 500 in its family quickly, never a hang to the deadline; readiness
// turns false; a write meanwhile changes nothing; and once the database is back the same
// process answers again and turns ready, without a restart.
func TestEveryServiceRefusesFastWhileItsDatabaseIsGoneAndRecoversWithoutARestart(t *testing.T) {
	e := start(t, "postgres")
	today := time.Now().UTC().Format(time.DateOnly)
	// Each a read the module answers from its own database; route 8 answers in the /v1 envelope
	// despite its path, as decided.
	cases := []struct {
		module string
		read   func() response
	}{
		{"identity", func() response { return e.do("GET", "/v1/users/"+e.demo.UserIDs[0], e.read(), "") }},
		{"tenant", func() response { return e.do("GET", "/v1/tenants/"+e.demo.TenantID, e.read(), "") }},
		{"billing", func() response { return e.do("GET", "/v1/apps/"+e.demo.AppID+"/promotions", e.read(), "") }},
		{"analytics", func() response {
			return e.do("GET", "/api/v1/analytics/sign-ins?from="+today+"&to="+today, e.read(), "")
		}},
	}
	var slowest time.Duration
	for _, c := range cases {
		t.Run(c.module, func(t *testing.T) {
			if r := c.read(); r.status != 200 {
				t.Fatalf("with the database up: %d %s", r.status, r.raw)
			}
			db := newDatabaseSwitch(t, e.stack.DatabaseURLs[c.module])
			db.gone()
			began := time.Now()
			r := c.read()
			took := time.Since(began)
			slowest = max(slowest, took)
			if took > refusalBound {
				t.Fatalf("refused after %s, want within %s", took, refusalBound)
			}
			r.fails(t, 500)
			if c.module == "tenant" {
				// A write while the database is gone fails whole: nothing of it shows later.
				e.do("PUT", "/v1/tenants/"+e.demo.TenantID, e.write(), `{"kind":"tenant","name":"Written during the outage"}`).fails(t, 500)
			}
			testkit.Eventually(t, "readiness turns false", func() bool { return e.ready(t) != 200 })
			db.back()
			testkit.Eventually(t, "the route answers again", func() bool { return c.read().status == 200 })
			testkit.Eventually(t, "readiness turns true", func() bool { return e.ready(t) == 200 })
			if c.module == "tenant" {
				if name := e.tenant(t, e.demo.TenantID, e.read())["name"]; name == "Written during the outage" {
					t.Fatal("a write refused during the outage was applied")
				}
			}
		})
	}
	t.Run("webhook", func(t *testing.T) {
		// The provider's deliveries to route 3 are refused with 500 while webhook-ingest's
		// database is gone, and are taken once it is back: the provider's retries bring them.
		db := newDatabaseSwitch(t, e.stack.DatabaseURLs["webhook"])
		db.gone()
		px := e.demo.Pspx
		_, payURL := e.createCheckout(t, e.write(), e.demo.TenantID, e.demo.AppID, checkoutBody(px.Prices.OneTime, px.TaxRate, "payment", nil))
		if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
			t.Fatalf("status %s", got)
		}
		refused := func() (int, bool) {
			var out struct {
				Deliveries []struct {
					Status   string `json:"status"`
					Attempts []struct {
						Status int `json:"status"`
					} `json:"attempts"`
				} `json:"deliveries"`
			}
			res, err := http.Get(e.stack.BaseURL + mount.DeliveriesPath + "?provider=pspx")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			n, pending := 0, false
			for _, d := range out.Deliveries {
				for _, a := range d.Attempts {
					if a.Status == 500 {
						n++
					}
				}
				pending = pending || d.Status != "delivered"
			}
			return n, pending
		}
		testkit.Eventually(t, "route 3 refuses the provider's deliveries with 500", func() bool { n, _ := refused(); return n > 0 })
		testkit.Eventually(t, "readiness turns false", func() bool { return e.ready(t) != 200 })
		db.back()
		testkit.Eventually(t, "every delivery is taken once the database is back", func() bool { _, pending := refused(); return !pending })
		testkit.Eventually(t, "readiness turns true", func() bool { return e.ready(t) == 200 })
	})
	t.Logf("slowest refusal with a database gone: %s", slowest)
}
