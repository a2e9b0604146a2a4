package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/testkit/webflow"
)

// call is one request of the load (a login counts as one: its two requests belong together).
type call struct {
	op         string
	start, end time.Time
	err        error
}

// recorder keeps every call of the run.
type recorder struct {
	mu    sync.Mutex
	calls []call
}

// do runs f as call op. A call cut short because the load ended (its context canceled) is not
// kept: it says nothing about the cluster.
func (r *recorder) do(ctx context.Context, op string, f func() error) error {
	c := call{op: op, start: time.Now()}
	c.err = f()
	c.end = time.Now()
	if c.err != nil && ctx.Err() != nil {
		return c.err
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return c.err
}

// paid is a one-time payment whose flow the load saw through to the app's return URL.
type paid struct {
	tenantID string
	quantity int
}

// load runs the published flows against the balancer until ctx ends.
type load struct {
	demo   seed.Demo
	base   string
	client *http.Client // no redirects followed: each hop is checked
	rec    recorder
	mu     sync.Mutex
	paid   []paid
	users  int // signed up, as the load saw it
}

func newLoad(demo seed.Demo, base string) *load {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
	return &load{demo: demo, base: base, client: &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// run starts workers that each loop the end user's flow until ctx ends; every second iteration
// also buys units with the user's token.
func (l *load) run(ctx context.Context, workers int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				_ = l.user(ctx, w, i)
			}
		})
	}
	return &wg
}

// user signs a new end user up through the hosted page and the token route, reads the user and
// the tenant with the token and with the read key, lists the app's webhook endpoints with the
// write key, refreshes, and on even iterations pays for
// 1–3 units of the one-time price.
func (l *load) user(ctx context.Context, w, i int) error {
	app := webflow.App{BaseURL: l.base, AppID: l.demo.AppID, RedirectURI: l.demo.RedirectURI}
	email := fmt.Sprintf("load-%d-%d-%s@example.com", w, i, randomHex(3))
	// Each user arrives from an address of their own (the balancer is the trusted proxy), so
	// sign-up limits per address apply as they would in production.
	from := http.Header{"X-Forwarded-For": {fmt.Sprintf("10.%d.%d.%d", w+1, i/250, i%250+1)}}
	var code string
	if err := l.rec.do(ctx, "sign-up", func() (err error) {
		code, err = webflow.Login(ctx, l.client, app, true, email, "correct horse battery staple", "n", from)
		return err
	}); err != nil {
		return err
	}
	l.mu.Lock()
	l.users++
	l.mu.Unlock()
	var tk webflow.Tokens
	if err := l.rec.do(ctx, "code exchange", func() (err error) {
		tk, err = webflow.Exchange(ctx, l.client, l.base, map[string]string{"client_id": app.AppID, "grant_type": "authorization_code",
			"code": code, "redirect_uri": app.RedirectURI, "nonce": "n"})
		return err
	}); err != nil {
		return err
	}
	bearer := map[string]string{"Authorization": "Bearer " + tk.Access}
	readKey := map[string]string{"X-API-KEY": l.demo.ReadKey, "X-API-KEY-TYPE": "read", "X-CLIENT-ID": l.demo.AppID}
	var me, tenant struct {
		ID string `json:"id"`
	}
	if err := l.rec.do(ctx, "GET /v1/users/me", func() error { return l.getData(ctx, "/v1/users/me", bearer, &me) }); err != nil {
		return err
	}
	if err := l.rec.do(ctx, "GET /v1/tenants/me", func() error { return l.getData(ctx, "/v1/tenants/me", bearer, &tenant) }); err != nil {
		return err
	}
	if err := l.rec.do(ctx, "GET /v1/users/:id", func() error { return l.getData(ctx, "/v1/users/"+me.ID, readKey, nil) }); err != nil {
		return err
	}
	if err := l.rec.do(ctx, "GET /v1/tenants/:id", func() error { return l.getData(ctx, "/v1/tenants/"+tenant.ID, readKey, nil) }); err != nil {
		return err
	}
	// The app's server reads its webhook endpoints with the write key: the outbound service's
	// share of the load.
	writeKey := map[string]string{"X-API-KEY": l.demo.WriteKey, "X-API-KEY-TYPE": "write", "X-CLIENT-ID": l.demo.AppID}
	if err := l.rec.do(ctx, "GET /v1/apps/:id/webhook-endpoints", func() error {
		return l.getData(ctx, "/v1/apps/"+l.demo.AppID+"/webhook-endpoints", writeKey, nil)
	}); err != nil {
		return err
	}
	if err := l.rec.do(ctx, "refresh", func() error {
		_, err := webflow.Exchange(ctx, l.client, l.base, map[string]string{"client_id": app.AppID, "grant_type": "refresh_token", "refresh_token": tk.Refresh})
		return err
	}); err != nil {
		return err
	}
	if i%2 == 0 {
		return l.pay(ctx, tenant.ID, bearer, 1+(i/2)%3)
	}
	return nil
}

// getData GETs path and decodes the /v1 envelope's data into into (nil: only the status counts).
func (l *load) getData(ctx context.Context, path string, headers map[string]string, into any) error {
	status, body, _, err := l.send(ctx, l.client, http.MethodGet, l.base+path, headers, "")
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return webflow.StatusError{Status: status, Body: body}
	}
	if into == nil {
		return nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		return err
	}
	return json.Unmarshal(env.Data, into)
}

// send makes one request and reads the whole answer (so the connection is reused).
func (l *load) send(ctx context.Context, client *http.Client, method, u string, headers map[string]string, body string) (int, string, string, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, "", "", err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	return res.StatusCode, string(raw), res.Header.Get("Location"), err
}

// pay buys quantity units for the user's tenant: route 10 with the user's token, Berth's payment
// page, the provider sandbox's card page, Berth's return page back to the app. The provider's
// webhooks then reach route 3 through the balancer.
func (l *load) pay(ctx context.Context, tenantID string, bearer map[string]string, quantity int) error {
	body, _ := json.Marshal(map[string]any{"price": l.demo.Pspx.Prices.OneTime, "taxRate": l.demo.Pspx.TaxRate, "mode": "payment",
		"quantity": quantity, "paymentMethodType": "card", "allowedCountry": "DE", "billingAddressCollection": false,
		"isReverseCharge": false, "state": seed.DemoState, "test": true})
	var session struct {
		NextAction struct {
			URL string `json:"url"`
		} `json:"nextAction"`
	}
	if err := l.rec.do(ctx, "checkout", func() error {
		status, raw, _, err := l.send(ctx, l.client, http.MethodPost, l.base+"/v1/tenants/"+tenantID+"/checkout-sessions",
			map[string]string{"Authorization": bearer["Authorization"], "Content-Type": "application/json"}, string(body))
		if err == nil && status != http.StatusOK {
			err = webflow.StatusError{Status: status, Body: raw}
		}
		if err != nil {
			return err
		}
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(raw), &env); err != nil {
			return err
		}
		return json.Unmarshal(env.Data, &session)
	}); err != nil {
		return err
	}
	// A browser of its own: the pages keep state in cookies.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Transport: l.client.Transport, Jar: jar, Timeout: 30 * time.Second, CheckRedirect: l.client.CheckRedirect}
	hop := func(op, method, u string, form url.Values, want int) (string, error) {
		var loc string
		err := l.rec.do(ctx, op, func() error {
			headers := map[string]string{}
			if form != nil {
				headers["Content-Type"] = "application/x-www-form-urlencoded"
			}
			status, raw, location, err := l.send(ctx, browser, method, u, headers, form.Encode())
			if err == nil && status != want {
				err = webflow.StatusError{Status: status, Body: raw}
			}
			loc = location
			return err
		})
		return loc, err
	}
	providerPage, err := hop("payment page", http.MethodGet, session.NextAction.URL+"&state="+seed.DemoState, nil, http.StatusSeeOther)
	if err != nil {
		return err
	}
	if _, err := hop("provider page", http.MethodGet, providerPage, nil, http.StatusOK); err != nil {
		return err
	}
	card := url.Values{"card_number": {"4242424242424242"}, "card_expiry": {"12/34"}, "card_cvc": {"123"}, "name": {"Load User"},
		"shipping_name": {"Load User"}, "shipping_line1": {"1 Harbour Street"}, "shipping_postal_code": {"20457"},
		"shipping_city": {"Hamburg"}, "shipping_country": {"DE"}}
	back, err := hop("provider submit", http.MethodPost, providerPage, card, http.StatusSeeOther)
	if err != nil {
		return err
	}
	toApp, err := hop("return page", http.MethodGet, back, nil, http.StatusSeeOther)
	if err != nil {
		return err
	}
	if u, err := url.Parse(toApp); err != nil || u.Query().Get("status") != "completed" {
		return fmt.Errorf("the return page sent the user to %q, want status completed", toApp)
	}
	l.mu.Lock()
	l.paid = append(l.paid, paid{tenantID: tenantID, quantity: quantity})
	l.mu.Unlock()
	return nil
}
