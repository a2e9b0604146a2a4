package stacktest_test

import (
	"context"
	"fmt"
	"html"
	"html/template"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/pkg/testkit/latency"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

// consoleRows is how many users and how many tenants the demo app holds for the list pages.
const consoleRows = 100_000

// BenchmarkConsoleListPages measures the console's users and tenants lists as a member's browser loads them —
// the edge, the console's handler, its gRPC calls with the member's operator token and the
// services' PostgreSQL reads — with 100,000 users and 100,000 tenants in the demo app. Each page
// reports p50 and p99 in milliseconds (the goal: p99 ≤ 100 ms) beside its baseline: a bare
// net/http handler reading the same first page over pgx from the same database and writing it as
// an HTML table, fetched by the same client. It runs on PostgreSQL only (TEST_DATABASE_URL).
func BenchmarkConsoleListPages(b *testing.B) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		b.Skip("the console's list pages are measured on PostgreSQL: set TEST_DATABASE_URL")
	}
	env := stacktest.StartWith(b, stacktest.Options{Issuer: "bench", RedirectURI: "http://127.0.0.1:1/callback", Postgres: true})
	ctx := context.Background()
	pools := map[string]*pgxpool.Pool{}
	for _, module := range []string{"identity", "tenant"} {
		pool, err := pgxpool.New(ctx, env.Stack.DatabaseURLs[module])
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(pool.Close)
		pools[module] = pool
	}
	fillListPages(b, pools, env.App.AppID)
	client := signedInConsole(b, env)
	app := env.Stack.BaseURL + "/console/apps/" + env.App.AppID

	for _, group := range []struct {
		name     string
		pool     *pgxpool.Pool
		baseline string // the first page's rows, as the bare handler reads them
		pages    map[string]string
	}{
		{name: "users", pool: pools["identity"],
			baseline: `select id, email, name, created_at from users where app_id = $1 and not deleted order by lower(email) collate "C", id limit 26`,
			pages:    map[string]string{"first": app + "/users", "prefix": app + "/users?q=" + url.QueryEscape("user-5"), "next": nextPage(b, client, app+"/users")}},
		{name: "tenants", pool: pools["tenant"],
			baseline: `select id, name, created_at from tenants where app_id = $1 and not deleted order by lower(name) collate "C", id limit 26`,
			pages:    map[string]string{"first": app + "/tenants", "prefix": app + "/tenants?q=" + url.QueryEscape("user-5"), "next": nextPage(b, client, app+"/tenants")}},
	} {
		bare := bareListPage(group.pool, group.baseline, env.App.AppID)
		b.Run(group.name+"/baseline", func(b *testing.B) { latency.Measure(b, func() error { return get(client, bare.URL) }) })
		for name, u := range group.pages {
			b.Run(group.name+"/"+name, func(b *testing.B) { latency.Measure(b, func() error { return get(client, u) }) })
		}
		bare.Close()
	}
}

// fillListPages copies consoleRows users and consoleRows tenants of the app into the services'
// databases, addressed and named in mixed case so that neither insertion order nor case is the
// pages' order, and analyzes the tables as autovacuum would after such a load.
func fillListPages(b *testing.B, pools map[string]*pgxpool.Pool, appID string) {
	b.Helper()
	now := time.Now().UTC()
	for module, table := range map[string]string{"identity": "users", "tenant": "tenants"} {
		columns := []string{"id", "app_id", "name", "created_at", "updated_at"}
		if table == "users" {
			columns = append(columns, "email")
		}
		rows := make([][]any, consoleRows)
		for i := range rows {
			name := fmt.Sprintf("User-%d %s", i, stacktest.RandomHex(3))
			rows[i] = []any{uuid.NewString(), appID, name, now, now}
			if table == "users" {
				rows[i] = append(rows[i], fmt.Sprintf("User-%d.%s@Example%d.test", i, stacktest.RandomHex(3), i%7))
			}
		}
		pgtest.CopyAnalyzed(b, pools[module], table, columns, rows)
	}
}

// signedInConsole is an HTTP client holding the demo member's console session: it signs in through
// the sign-in form as a browser does (the CSRF cookie and field, then the session cookie).
func signedInConsole(b *testing.B, env stacktest.Env) *http.Client {
	b.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		b.Fatal(err)
	}
	client := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	res, err := client.Get(env.App.Console.URL)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindSubmatch(body)
	if m == nil {
		b.Fatalf("no CSRF field on the sign-in page (%d)", res.StatusCode)
	}
	res, err = client.PostForm(res.Request.URL.String(), url.Values{"email": {env.App.Console.Email},
		"password": {env.App.Console.Password}, "csrf_token": {html.UnescapeString(string(m[1]))}})
	if err != nil {
		b.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `id="sign-out"`) {
		b.Fatalf("console sign-in: %d\n%s", res.StatusCode, body)
	}
	return client
}

// nextPage is the link of the page after u's first, as its "next page" link names it.
func nextPage(b *testing.B, client *http.Client, u string) string {
	b.Helper()
	res, err := client.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`href="([^"]+)" id="next-page"`).FindSubmatch(body)
	if m == nil {
		b.Fatalf("no next page on %s (%d)", u, res.StatusCode)
	}
	next, err := res.Request.URL.Parse(html.UnescapeString(string(m[1])))
	if err != nil {
		b.Fatal(err)
	}
	return next.String()
}

// bareRows is the baseline's page: a table of the rows.
var bareRows = template.Must(template.New("rows").Parse(
	`<!doctype html><table>{{range .}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</table>`))

// bareListPage serves sql's rows for appID as HTML from a plain net/http handler over pgx: what a
// list page costs without the console, its gRPC hop and the services' layers.
func bareListPage(pool *pgxpool.Pool, sql, appID string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rows, err := pool.Query(r.Context(), sql, appID)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		var page [][]any
		for rows.Next() {
			values, err := rows.Values()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			page = append(page, values)
		}
		if err := rows.Err(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = bareRows.Execute(w, page)
	}))
}

// get fetches u and reads the whole answer; anything but 200 is an error.
func get(client *http.Client, u string) error {
	res, err := client.Get(u)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", u, res.StatusCode)
	}
	return nil
}
