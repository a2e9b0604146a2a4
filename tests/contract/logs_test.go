package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// lockedBuffer is a log sink many goroutines write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A run's log, at debug level, holds none of the secrets the run handled (keys, tokens, codes,
// passwords, provider secrets, the payment link's state), and the edge writes one JSON access
// line per request.
func TestARunsLogHoldsNoSecretAndOneAccessLinePerRequest(t *testing.T) {
	var logs lockedBuffer
	e := startWith(t, stacktest.Options{Log: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})

	// An end user signs up, exchanges the code, refreshes, reads and changes itself, and pays.
	code := e.signUp(t, "log-user@example.com", "n")
	tk := e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code", "code": code,
		"redirect_uri": e.demo.RedirectURI, "nonce": "n"})
	again := e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "refresh_token", "refresh_token": tk.refresh,
		"redirect_uri": e.demo.RedirectURI, "nonce": "n2", "prompt": "none"})
	me := e.do("GET", "/v1/users/me", bearer(again.access), "").ok(t, 200).(map[string]any)
	e.do("GET", "/v1/users/"+me["id"].(string), e.read(), "").ok(t, 200)
	e.do("PUT", "/v1/users/"+me["id"].(string), e.write(), `{"user":{"name":"Log User"}}`).ok(t, 200)
	e.do("GET", "/v1/users/me", map[string]string{"Authorization": "Bearer " + again.access + "x"}, "").fails(t, 401)
	e.do("GET", "/v1/tenants/"+e.demo.TenantID, creds(e.demo.ReadKey+"x", "read", e.demo.AppID), "").fails(t, 401)
	u := e.tokenUser(t, "log-payer@example.com")
	_, payURL := e.createCheckout(t, bearer(u.access), u.tenant, e.demo.AppID, checkoutBody(e.demo.Pspx.Prices.Monthly, e.demo.Pspx.TaxRate, "subscription", nil))
	e.pay(t, payURL, card("4242424242424242"))
	// The second app's provider key, rotated by the operator and used by a provider route.
	p := e.hookedPspxAccount(t)
	e.invoices(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.stack.Sandboxes.Deliveries.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}

	secrets := map[string]string{
		"read key": e.demo.ReadKey, "write key": e.demo.WriteKey, "pspy app read key": e.demo.PspyApp.ReadKey,
		"pspy app write key": e.demo.PspyApp.WriteKey, "other app write key": e.other.WriteKey,
		"admin token": e.adminToken, "service token": e.serviceToken, "password": "correct horse battery staple",
		"authorization code": code, "access token": tk.access, "refresh token": tk.refresh, "ID token": tk.id,
		"rotated access token": again.access, "rotated refresh token": again.refresh, "payer's access token": u.access,
		"payment link state": seed.DemoState, "pspx webhook secret": e.demo.Pspx.WebhookSecret, "pspx secret key": p.key,
	}
	logged := logs.String()
	if !strings.Contains(logged, `"msg":"http request"`) {
		t.Fatal("the log holds no access line: it is not the run's log")
	}
	for what, secret := range secrets {
		if secret == "" {
			t.Fatalf("%s is empty: the test lost track of it", what)
		}
		if strings.Contains(logged, secret) {
			t.Errorf("the log holds the %s", what)
		}
	}

	// One access line, valid JSON, per request.
	accessLines := func() int {
		n := 0
		for _, line := range strings.Split(logs.String(), "\n") {
			if !strings.Contains(line, `"msg":"http request"`) {
				continue
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["level"] != "INFO" || rec["path"] == nil || rec["status"] == nil {
				t.Fatalf("access line %q: %v", line, err)
			}
			n++
		}
		return n
	}
	before := accessLines()
	for range 5 {
		e.do("GET", "/v1/tenants/"+e.demo.TenantID, e.read(), "").ok(t, 200)
	}
	e.do("GET", "/v1/nowhere", e.read(), "").fails(t, 404)
	if got := accessLines() - before; got != 6 {
		t.Fatalf("6 requests wrote %d access lines", got)
	}
}
