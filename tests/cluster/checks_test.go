package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/testkit/webflow"
)

// sumCounter adds up every sample of a counter in the Prometheus text format.
func sumCounter(r io.Reader, metric string) (float64, error) {
	var sum float64
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(f) == 0 {
			return 0, fmt.Errorf("%s: a sample without a value: %q", metric, line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %q: %w", metric, line, err)
		}
		sum += v
	}
	return sum, sc.Err()
}

// counters reads, per replica, the requests it has answered: REST requests for an edge, gRPC
// calls for a service.
func (c *cluster) counters(t testing.TB) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for name, rs := range c.replicas {
		metric := "berth_grpc_server_handled_total"
		if name == gateway {
			metric = "berth_http_requests_total"
		}
		for _, r := range rs {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			v, err := r.scrape(ctx, metric)
			cancel()
			if err != nil {
				t.Fatalf("metrics of %s: %v", r.name, err)
			}
			out[r.name] = v
		}
	}
	return out
}

// Balance is judged on at least minBalanceTotal requests per service, every replica having
// answered at least minShare of them.
const minShare, minBalanceTotal = 0.3, 20

// steadyTotals is how many requests each service with replicas answered between two readings.
func (c *cluster) steadyTotals(before, after map[string]float64) map[string]float64 {
	totals := map[string]float64{}
	for _, name := range order {
		if rs := c.replicas[name]; len(rs) >= 2 {
			for _, r := range rs {
				totals[name] += after[r.name] - before[r.name]
			}
		}
	}
	return totals
}

// enoughToJudge reports whether every service with replicas answered minBalanceTotal requests
// between the two readings.
func (c *cluster) enoughToJudge(before, after map[string]float64) bool {
	for _, total := range c.steadyTotals(before, after) {
		if total < minBalanceTotal {
			return false
		}
	}
	return true
}

// checkBalance requires every replica of a service to have answered at least minShare of the
// service's requests between two readings.
func (c *cluster) checkBalance(t testing.TB, before, after map[string]float64) {
	t.Helper()
	totals := c.steadyTotals(before, after)
	for _, name := range order {
		rs := c.replicas[name]
		if len(rs) < 2 {
			continue
		}
		total := totals[name]
		var shares []string
		for _, r := range rs {
			n := after[r.name] - before[r.name]
			shares = append(shares, fmt.Sprintf("%s %.0f", r.name, n))
			if total >= minBalanceTotal && n/total < minShare {
				t.Errorf("%s answered %.0f of %s's %.0f requests in the steady phase, want at least %.0f%%", r.name, n, name, total, 100*minShare)
			}
		}
		if total < minBalanceTotal {
			t.Errorf("%s answered only %.0f requests in the steady phase: too few to judge the balance", name, total)
		}
		t.Logf("balance %s: %s", name, strings.Join(shares, ", "))
	}
}

// checkExactlyOnce waits for the read models to settle and compares them with the services' own
// databases, which the events were written beside: every user and tenant identity and tenant
// hold appears in analytics once, and every completed payment billing holds reached the tenant's
// units and analytics once — none lost, none applied twice. It also checks that nothing the load
// saw succeed is missing.
func (c *cluster) checkExactlyOnce(t testing.TB, l *load, began time.Time) {
	t.Helper()
	from, to := began.Format(time.DateOnly), time.Now().UTC().Format(time.DateOnly)
	var last string
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	for {
		summary, diff, err := c.compare(l, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if diff == "" {
			t.Logf("read models agree with the services' databases %s after the load: %s", time.Since(start).Round(100*time.Millisecond), summary)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read models did not settle to the services' data within 90 s:\n%s", diff)
		}
		if diff != last {
			t.Logf("waiting for the read models: %s", strings.SplitN(diff, "\n", 2)[0])
			last = diff
		}
		time.Sleep(time.Second)
	}
}

// compare returns what it compared and "" when everything agrees, or what does not.
func (c *cluster) compare(l *load, from, to string) (summary, diff string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var problems []string
	appID := c.demo.AppID

	users, err := column(ctx, c, "identity", `select id::text from users where app_id = $1`, appID)
	if err != nil {
		return "", "", err
	}
	tenants, err := column(ctx, c, "tenant", `select id::text from tenants where app_id = $1`, appID)
	if err != nil {
		return "", "", err
	}
	if len(users) < l.users+len(c.demo.UserIDs) {
		problems = append(problems, fmt.Sprintf("identity holds %d users, fewer than the %d seeded and signed up", len(users), l.users+len(c.demo.UserIDs)))
	}
	var tenantItems []struct {
		ID    string `json:"id"`
		Users []struct {
			ID string `json:"id"`
		} `json:"users"`
	}
	if err := c.list(ctx, "/v1/analytics/tenants", from, to, &tenantItems); err != nil {
		return "", "", err
	}
	seenUsers, seenTenants := map[string]int{}, map[string]int{}
	for _, it := range tenantItems {
		seenTenants[it.ID]++
		for _, u := range it.Users {
			seenUsers[u.ID]++
		}
	}
	problems = append(problems, sameOnce("users (identity vs analytics)", users, seenUsers)...)
	problems = append(problems, sameOnce("tenants (tenant vs analytics)", tenants, seenTenants)...)

	type units struct{ payments, units int }
	completed := map[string]units{}
	rows, err := c.dbs["billing"].Query(ctx, `select tenant_id::text, count(*), sum(quantity) from checkout_sessions
		where app_id = $1 and mode = 'payment' and status = 'completed' group by tenant_id`, appID)
	if err != nil {
		return "", "", err
	}
	for rows.Next() {
		var id string
		var u units
		if err := rows.Scan(&id, &u.payments, &u.units); err != nil {
			return "", "", err
		}
		completed[id] = u
	}
	if err := rows.Err(); err != nil {
		return "", "", err
	}
	var payments []struct {
		ID    string  `json:"id"`
		Units float64 `json:"units"`
		User  *struct {
			Tenant *struct {
				ID string `json:"id"`
			} `json:"tenant"`
		} `json:"user"`
	}
	if err := c.list(ctx, "/v1/analytics/one-time-payments", from, to, &payments); err != nil {
		return "", "", err
	}
	projected, ids := map[string]units{}, map[string]bool{}
	for _, p := range payments {
		if ids[p.ID] {
			problems = append(problems, "one-time payment "+p.ID+" listed twice by analytics")
		}
		ids[p.ID] = true
		if p.User == nil || p.User.Tenant == nil {
			problems = append(problems, "one-time payment "+p.ID+" names no payer, though every payment was made with a user's token")
			continue
		}
		u := projected[p.User.Tenant.ID]
		u.payments++
		u.units += int(p.Units)
		projected[p.User.Tenant.ID] = u
	}
	for id, want := range completed {
		if got := projected[id]; got != want {
			problems = append(problems, fmt.Sprintf("tenant %s: billing completed %d payments for %d units, analytics lists %d for %d", id, want.payments, want.units, got.payments, got.units))
		}
		var tn struct {
			PaidUnits string `json:"paidUnits"`
		}
		if err := c.get(ctx, "/v1/tenants/"+id, &tn); err != nil {
			return "", "", err
		}
		if tn.PaidUnits != strconv.Itoa(want.units) {
			problems = append(problems, fmt.Sprintf("tenant %s: billing completed %d units, the tenant holds %s", id, want.units, tn.PaidUnits))
		}
	}
	for id := range projected {
		if _, ok := completed[id]; !ok {
			problems = append(problems, "analytics lists payments for tenant "+id+", which billing has none completed for")
		}
	}
	for _, p := range l.paid {
		if completed[p.tenantID].units != p.quantity || completed[p.tenantID].payments != 1 {
			problems = append(problems, fmt.Sprintf("the load saw tenant %s pay %d units, billing holds %+v", p.tenantID, p.quantity, completed[p.tenantID]))
		}
	}
	if len(l.paid) == 0 {
		problems = append(problems, "the load completed no payment")
	}
	sort.Strings(problems)
	var total units
	for _, u := range completed {
		total.payments += u.payments
		total.units += u.units
	}
	summary = fmt.Sprintf("%d users, %d tenants, %d completed payments for %d units (%d seen through by the load)",
		len(users), len(tenants), total.payments, total.units, len(l.paid))
	return summary, strings.Join(problems, "\n"), nil
}

// sameOnce compares the ids a service holds with how often a read model lists each.
func sameOnce(what string, truth []string, seen map[string]int) []string {
	var out []string
	want := map[string]bool{}
	for _, id := range truth {
		want[id] = true
		if seen[id] != 1 {
			out = append(out, fmt.Sprintf("%s: %s listed %d times, want once", what, id, seen[id]))
		}
	}
	for id := range seen {
		if !want[id] {
			out = append(out, fmt.Sprintf("%s: %s listed but not held", what, id))
		}
	}
	return out
}

func column(ctx context.Context, c *cluster, service, sql string, args ...any) ([]string, error) {
	rows, err := c.dbs[service].Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("%s database: %w", service, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// list reads a streamed analytics list with the read key.
func (c *cluster) list(ctx context.Context, path, from, to string, items any) error {
	var env struct {
		Data struct {
			Items json.RawMessage `json:"items"`
		} `json:"data"`
	}
	if err := c.read(ctx, path+"?from="+from+"&to="+to, &env); err != nil {
		return err
	}
	return json.Unmarshal(env.Data.Items, items)
}

// get reads a /v1 resource's data with the read key.
func (c *cluster) get(ctx context.Context, path string, data any) error {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := c.read(ctx, path, &env); err != nil {
		return err
	}
	return json.Unmarshal(env.Data, data)
}

func (c *cluster) read(ctx context.Context, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.lb.url()+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-KEY", c.demo.ReadKey)
	req.Header.Set("X-API-KEY-TYPE", "read")
	req.Header.Set("X-CLIENT-ID", c.demo.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %w", path, webflow.StatusError{Status: res.StatusCode, Body: string(raw)})
	}
	return json.Unmarshal(raw, into)
}
