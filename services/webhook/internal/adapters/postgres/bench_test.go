package postgres_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/webhook/internal/adapters/postgres"
	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/domain"
)

// Route 3 under load, as the providers deliver: benchClients calls at once, like concurrent
// deliveries of a provider's queue.
const (
	benchClients  = 16
	benchHost     = "berth.test"
	benchSecret   = "whsec_9fQ2mX7vLr4TzK1pWc8bHn3sYd6gJe0a"
	benchCustomer = "cus_Qm4Zr8Tn2Wx6Kb"
	benchMinSeed  = 1000 // events stored before "duplicate" runs on its own
)

// BenchmarkPspxIngest measures route 3's use case (parse, host check, the connection through the
// Billing port, the pspx-signature HMAC, the call stored in PostgreSQL keyed by its event id,
// billing's apply, the outcome recorded) with benchClients concurrent callers and as many pooled
// connections (see poolAndLibpqURLs):
//
//   - baseline: pgbench running the store's INSERT of a call, one transaction per event with a key
//     of its own, with the same client count against the same database and table: the least an
//     event stored durably costs on this server;
//   - unique: b.N events never seen before, each stored and applied once;
//   - duplicate: b.N redeliveries of applied events, which must change nothing.
//
// Each variant reports events/s; `make bench` prints the ingest variants beside the baseline.
// After every run, billing must have applied each event exactly once and each event must be stored
// with outcome applied after one attempt (none lost), or the benchmark fails. The server's fsync
// and synchronous_commit are logged: pgtest's throwaway cluster runs without fsync, so durable
// figures need TEST_DATABASE_URL naming a server that has it on.
func BenchmarkPspxIngest(b *testing.B) {
	ctx := context.Background()
	poolURL, libpqURL := poolAndLibpqURLs(b, pgtest.URL(b, "webhook", postgres.Migrate), benchClients)
	pool, err := pgxx.Open(ctx, poolURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	var fsync, syncCommit string
	if err := pool.QueryRow(ctx, "SELECT current_setting('fsync'), current_setting('synchronous_commit')").Scan(&fsync, &syncCommit); err != nil {
		b.Fatal(err)
	}
	const noBaseline = "no baseline: pgbench is neither on PATH nor under /usr/lib/postgresql/*/bin (install the PostgreSQL client tools)"
	pgbench := pgbenchBinary()
	// A leaf benchmark's log is always printed (its parent's, and a skip's, only with -v): the
	// first variant that runs says what the figures were measured on.
	var settings sync.Once
	logSettings := func(b *testing.B) {
		settings.Do(func() {
			b.Logf("PostgreSQL fsync=%s synchronous_commit=%s; %d concurrent callers; store pool of at most %d connections; GOMAXPROCS %d",
				fsync, syncCommit, benchClients, pool.Config().MaxConns, runtime.GOMAXPROCS(0))
			if fsync != "on" {
				b.Logf("WARNING: fsync is %s on this server, so commits are not flushed: these are not durable figures (set TEST_DATABASE_URL to a server with fsync on)", fsync)
			}
			if pgbench == "" {
				b.Log(noBaseline)
			}
		})
	}

	env := &ingestBench{billing: newBenchBilling(), pool: pool, prefix: randomToken(10)}
	svc, err := app.New(app.Config{Store: postgres.New(pool), Billing: env.billing, Host: benchHost, NewID: uuid.NewString})
	if err != nil {
		b.Fatal(err)
	}
	env.svc = svc

	b.Run("baseline", func(b *testing.B) {
		if pgbench == "" {
			b.Skip(noBaseline)
		}
		logSettings(b)
		sql := pgbenchScript(env.billing.conn.ID)
		if strings.Contains(sql, "$") {
			b.Fatalf("a parameter of Record's statement has no value in the pgbench script:\n%s", sql)
		}
		script := filepath.Join(b.TempDir(), "insert.sql")
		if err := os.WriteFile(script, []byte(sql), 0o600); err != nil {
			b.Fatal(err)
		}
		perClient := (b.N + benchClients - 1) / benchClients
		b.ResetTimer()
		out, err := exec.Command(pgbench, "--no-vacuum", "--protocol=prepared", "--client="+strconv.Itoa(benchClients),
			"--jobs="+strconv.Itoa(min(benchClients, runtime.GOMAXPROCS(0))), "--transactions="+strconv.Itoa(perClient),
			"--file="+script, libpqURL).CombinedOutput()
		b.StopTimer()
		if err != nil {
			b.Fatalf("pgbench: %v\n%s", err, out)
		}
		tps, err := pgbenchTPS(out)
		if err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		b.ReportMetric(tps, "events/s")
	})

	b.Run("unique", func(b *testing.B) {
		logSettings(b)
		batch := env.newEvents(b.N)
		b.ResetTimer()
		err := deliverConcurrently(ctx, env.svc, batch)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		env.sent = append(env.sent, batch...)
		env.checkAppliedOnce(ctx, b)
	})

	b.Run("duplicate", func(b *testing.B) {
		logSettings(b)
		if n := benchMinSeed - len(env.sent); n > 0 { // run on its own: store some events first
			seed := env.newEvents(n)
			if err := deliverConcurrently(ctx, env.svc, seed); err != nil {
				b.Fatal(err)
			}
			env.sent = append(env.sent, seed...)
		}
		batch := make([]app.Delivery, b.N)
		now := time.Now()
		for i := range batch { // the provider signs each delivery again
			body := env.sent[i%len(env.sent)].Body
			batch[i] = app.Delivery{Body: body, ContentType: "application/json; charset=utf-8", Signature: sign(body, now), Host: benchHost}
		}
		b.ResetTimer()
		err := deliverConcurrently(ctx, env.svc, batch)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		env.checkAppliedOnce(ctx, b)
	})
}

// poolAndLibpqURLs returns the database URL for the store's pool, with n connections unless it
// sizes the pool itself, and for pgbench, without pgx's pool settings (libpq refuses them). One
// connection per concurrent caller, as pgbench has one per client: a deployment sizes the pool the
// same way, with pool_max_conns in BERTH_DATABASE_URL; pgx's default of max(4, CPUs) would queue
// 16 deliveries behind 4 connections, each waiting for its commit's flush.
func poolAndLibpqURLs(b *testing.B, databaseURL string, n int) (pool, libpq string) {
	u, err := neturl.Parse(databaseURL)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	if !q.Has("pool_max_conns") {
		q.Set("pool_max_conns", strconv.Itoa(n))
	}
	u.RawQuery = q.Encode()
	pool = u.String()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return pool, u.String()
}

// ingestBench is the state the variants share: every event delivered so far.
type ingestBench struct {
	svc     *app.Service
	billing *benchBilling
	pool    *pgxpool.Pool
	prefix  string // makes this run's event ids its own
	next    int
	sent    []app.Delivery // first deliveries, in order
}

// newEvents returns n signed first deliveries of events never sent before.
func (e *ingestBench) newEvents(n int) []app.Delivery {
	now := time.Now()
	out := make([]app.Delivery, n)
	for i := range out {
		e.next++
		body := pspxInvoicePaid(fmt.Sprintf("%s%07d", e.prefix, e.next), now)
		out[i] = app.Delivery{Body: body, ContentType: "application/json; charset=utf-8", Signature: sign(body, now), Host: benchHost}
	}
	return out
}

// checkAppliedOnce fails b unless every event sent so far was applied by billing exactly once and
// is stored as applied after one attempt.
func (e *ingestBench) checkAppliedOnce(ctx context.Context, b *testing.B) {
	b.Helper()
	ids := make([]string, len(e.sent))
	for i, d := range e.sent {
		ev, err := domain.ParsePspxEvent(d.Body)
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = ev.ID
	}
	if n, total := e.billing.counts(ids); n != len(ids) || total != len(ids) {
		b.Fatalf("billing applied %d of %d events exactly once, %d applies in all: want each applied once", n, len(ids), total)
	}
	var stored int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_events WHERE provider = 'pspx' AND dedupe_key = ANY($1)
		AND outcome = 'applied' AND attempts = 1`, ids).Scan(&stored); err != nil {
		b.Fatal(err)
	}
	if stored != len(ids) {
		b.Fatalf("%d of %d events are stored as applied after one attempt: %d lost or applied again", stored, len(ids), len(ids)-stored)
	}
}

// deliverConcurrently hands every delivery to ReceivePspx from benchClients goroutines and
// returns the first failure. Every answer must be {received:true} and nothing more.
func deliverConcurrently(ctx context.Context, svc *app.Service, ds []app.Delivery) error {
	var (
		next     atomic.Int64
		failed   atomic.Bool
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	for range benchClients {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(ds) {
					return
				}
				r, err := svc.ReceivePspx(ctx, ds[i])
				if err == nil && r != (app.Receipt{}) {
					err = fmt.Errorf("answered %+v, want received", r)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("delivery %d: %w", i, err)
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// benchBilling stands in for billing: one customer of one test-mode connection with a known
// secret, and a count of applies per event. Every event is about an invoice of its own (in_<x>
// for evt_<x>), so the invoice an apply names tells the event.
type benchBilling struct {
	conn    app.Connection
	mu      sync.Mutex
	applied map[string]int // by invoice id
}

func (f *benchBilling) AppConnections(context.Context, string) ([]string, error) {
	return []string{f.conn.ID}, nil
}

func newBenchBilling() *benchBilling {
	return &benchBilling{conn: app.Connection{ID: uuid.NewString(), Secrets: []string{benchSecret}}, applied: map[string]int{}}
}

func (f *benchBilling) ResolvePspxCustomer(_ context.Context, customerID string, live bool) (app.Connection, error) {
	if customerID != benchCustomer || live {
		return app.Connection{}, fault.NotFound("Customer not found")
	}
	return f.conn, nil
}

func (f *benchBilling) ApplyPspxEvent(_ context.Context, connectionID string, live bool, typ string, object []byte) (app.Applied, error) {
	id, ok := leadingID(object)
	if connectionID != f.conn.ID || live || typ != "invoice.paid" || !ok {
		return app.Applied{}, fmt.Errorf("unexpected apply: connection %q, live %v, type %q, object %.40q", connectionID, live, typ, object)
	}
	f.mu.Lock()
	f.applied[id]++
	f.mu.Unlock()
	return app.Applied{Effect: "invoice " + id + " paid"}, nil
}

func (f *benchBilling) ApplyPspyPayment(context.Context, string, string) (app.Applied, error) {
	return app.Applied{}, errors.New("no pspy payment in this benchmark")
}

// counts returns how many of the events were applied exactly once, and all applies made.
func (f *benchBilling) counts(eventIDs []string) (once, total int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range eventIDs {
		if f.applied["in_"+strings.TrimPrefix(id, "evt_")] == 1 {
			once++
		}
	}
	for _, n := range f.applied {
		total += n
	}
	return once, total
}

// leadingID reads the id of an object rendered id first, as the pspx sandbox renders objects.
func leadingID(object []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(object, []byte(`{"id":"`))
	if i := bytes.IndexByte(rest, '"'); ok && i > 0 {
		return string(rest[:i]), true
	}
	return "", false
}

// pspxInvoicePaid is an invoice.paid event shaped like the pspx sandbox's (evt_<x> about in_<x>).
func pspxInvoicePaid(x string, at time.Time) []byte {
	created, start := at.Unix(), at.AddDate(0, -1, 0).Unix()
	return fmt.Appendf(nil, `{"id":"evt_%[1]s","object":"event","api_version":"2024-06-20","created":%[2]d,"data":{"object":{"id":"in_%[1]s",`+
		`"object":"invoice","account_country":"DE","account_name":"pspx sandbox","amount_due":1900,"amount_paid":1900,"amount_remaining":0,`+
		`"attempt_count":1,"attempted":true,"auto_advance":false,"billing_reason":"subscription_cycle","collection_method":"charge_automatically",`+
		`"created":%[3]d,"currency":"eur","customer":"%[4]s","customer_email":"ada@example.com","customer_name":"Ada Lovelace",`+
		`"default_payment_method":null,"ending_balance":0,"footer":null,"lines":{"object":"list","data":[{"id":"il_%[1]s","object":"line_item",`+
		`"amount":1900,"currency":"eur","description":"1 × Pro (at €19.00 / month)","discountable":true,"livemode":false,"metadata":{},`+
		`"period":{"end":%[2]d,"start":%[3]d},"price":{"id":"price_Pro1Monthly","object":"price","active":true,"currency":"eur",`+
		`"product":"prod_Pro1","recurring":{"interval":"month","interval_count":1},"type":"recurring","unit_amount":1900},`+
		`"proration":false,"quantity":1,"subscription":"sub_Rk2Lw9Px4Nc1","subscription_item":"si_Rk2Lw9Px4Nc1","tax_amounts":[],"tax_rates":[],`+
		`"type":"subscription"}],"url":"/v1/invoices/in_%[1]s/lines"},"livemode":false,"metadata":{"host":"%[5]s"},"number":"BERTH-0001",`+
		`"paid":true,"payment_intent":"pi_%[1]s","period_end":%[2]d,"period_start":%[3]d,"starting_balance":0,"status":"paid",`+
		`"status_transitions":{"finalized_at":%[2]d,"marked_uncollectible_at":null,"paid_at":%[2]d,"voided_at":null},`+
		`"subscription":"sub_Rk2Lw9Px4Nc1","subtotal":1900,"subtotal_excluding_tax":1900,"tax":null,"total":1900,"total_excluding_tax":1900,`+
		`"total_tax_amounts":[],"webhooks_delivered_at":%[2]d}},"livemode":false,"pending_webhooks":1,"request":{"id":null,"idempotency_key":null},`+
		`"type":"invoice.paid"}`, x, created, start, benchCustomer, benchHost)
}

// sign is the pspx-signature header the provider sends with body at t.
func sign(body []byte, t time.Time) string {
	mac := hmac.New(sha256.New, []byte(benchSecret))
	mac.Write(fmt.Appendf(nil, "%d.%s", t.Unix(), body))
	return fmt.Sprintf("t=%d,v1=%s", t.Unix(), hex.EncodeToString(mac.Sum(nil)))
}

// pgbenchScript is the store's own INSERT of a call (Store.Record's statement) with the values a
// call of this benchmark binds written in; the event id is random per transaction, so each one
// stores a row.
func pgbenchScript(connectionID string) string {
	at := time.Now()
	body := pspxInvoicePaid("pgbench0000000", at)
	key := "'evt_' || :k"
	values := []string{ // $1 … $13 of Record
		"gen_random_uuid()", "'pspx'", key, key, "'invoice.paid'", quote(connectionID), "true", fmt.Sprintf(`'\x%x'::bytea`, body),
		"'application/json; charset=utf-8'", quote(sign(body, at)), quote(benchHost), "'received'", "now()",
	}
	sql := postgres.InsertSQL
	for i := len(values); i >= 1; i-- { // $13 before $1
		sql = strings.ReplaceAll(sql, "$"+strconv.Itoa(i), values[i-1])
	}
	return "\\set k random(1, 1000000000000000)\n" + sql + ";\n"
}

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

var tpsLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)

// pgbenchTPS reads the throughput pgbench reports (without its initial connection time).
func pgbenchTPS(out []byte) (float64, error) {
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, errors.New("pgbench printed no tps line")
	}
	return strconv.ParseFloat(string(m[1]), 64)
}

// pgbenchBinary finds pgbench on PATH, else among the local PostgreSQL installations; "" if none.
func pgbenchBinary() string {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	if len(found) == 0 {
		return ""
	}
	return found[len(found)-1]
}

// randomToken is n letters and digits, as provider ids have.
func randomToken(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		panic(err)
	}
	for i, c := range buf {
		buf[i] = alphabet[int(c)%len(alphabet)]
	}
	return string(buf)
}
