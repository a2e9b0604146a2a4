package allinone

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/gateway/apidocs"
	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/module"
	"github.com/berthhq/berth/services/sandbox/mount"
)

// Paths of the development pages. Production deployments have none of them: apps register their
// own redirect and return pages, and nothing answers / but the edge's not-found.
const (
	// DevLandingPath is where a new user starts: links to everything a demo run offers, and the
	// demo's ids and keys.
	DevLandingPath = "/"
	// DevCallbackPath is the demo app's redirect URI: after signing in on the hosted login page,
	// the browser lands here and the page shows the authorization code with the command that
	// exchanges it.
	DevCallbackPath = "/dev/callback"
	// DevSignUpPath forwards to the hosted sign-up page of the demo app: a link short enough to
	// print.
	DevSignUpPath = "/dev/signup"
	// DevPaidPath is the demo apps' payment return URL: after paying in a sandbox the browser lands
	// here and the page shows the checkout's outcome and the tenant's billing state.
	DevPaidPath = "/dev/paid"
	// DevMailboxPath shows the emails the all-in-one run "sent" (its mail goes to an in-memory
	// mailbox, and each send is logged).
	DevMailboxPath = "/dev/mailbox"
)

// The templates of the development pages, in the hosted pages' layout.
var (
	landingPage = webpage.Template("landing", `{{template "head" "Berth"}}
<main class="wide">
<h1>Berth is running</h1>
<p class="app">the all-in-one development run, with a seeded demo</p>
<h2>Try it</h2>
<ul>
{{with .Demo}}<li><a id="signup" href="{{.LoginURL}}">Sign up</a> as an end user of the demo app (hosted page)</li>{{end}}
<li><a href="{{.APIDocs}}">API reference</a>: every route, with the OpenAPI document</li>
<li><a href="{{.Mailbox}}">Mailbox</a>: the emails this run sent</li>
{{if .Example}}<li><a href="{{.Example}}">Example app</a>: a page on the published browser SDK that signs a user in</li>{{end}}
<li>The provider sandboxes: <a href="{{.Pspx}}">pspx</a> and <a href="{{.Pspy}}">pspy</a></li>
</ul>
{{with .Demo}}<h2>The demo</h2>
<p>The same facts are in <code>.berth/demo.json</code>. The first app is on pspx, the second on pspy.</p>
<dl>
<dt>API</dt><dd><code>{{.BaseURL}}</code></dd>
<dt>App</dt><dd><code>{{.AppID}}</code></dd>
<dt>Read key</dt><dd><code>{{.ReadKey}}</code></dd>
<dt>Write key</dt><dd><code>{{.WriteKey}}</code></dd>
<dt>Tenant</dt><dd><code>{{.TenantID}}</code></dd>
<dt>Users</dt><dd>{{range .UserIDs}}<code>{{.}}</code> {{end}}</dd>
<dt>Promotion</dt><dd><code>{{.PromotionCode}}</code></dd>
<dt>State</dt><dd><code>{{.State}}</code><br>sent with sign-ins and checkouts and checked on the way back: CSRF protection of the redirect</dd>
<dt>pspy app</dt><dd><code>{{.PspyApp.AppID}}</code></dd>
<dt>its read key</dt><dd><code>{{.PspyApp.ReadKey}}</code></dd>
<dt>its write key</dt><dd><code>{{.PspyApp.WriteKey}}</code></dd>
<dt>its tenant</dt><dd><code>{{.PspyApp.TenantID}}</code></dd>
</dl>{{else}}<p>The demo is being seeded; reload in a moment.</p>{{end}}
</main>
{{template "foot"}}`)

	callbackPage = webpage.Template("callback", `{{template "head" "Signed in"}}
<main class="wide">
<h1 id="signed-in">Signed in</h1>
<p class="app">The hosted login page redirected here with an authorization code (valid for 60 seconds, single use).</p>
<dl><dt>code</dt><dd><code>{{.Code}}</code></dd><dt>state</dt><dd><code>{{.State}}</code></dd></dl>
<p>Exchange it for tokens:</p>
<pre>curl -s -X POST -H 'Content-Type: application/json' \
  -d '{"client_id":"{{.ClientID}}","grant_type":"authorization_code","code":"{{.Code}}","redirect_uri":"{{.RedirectURI}}","nonce":"{{.Nonce}}"}' \
  {{.Base}}/api/v1/tokens</pre>
<p><a href="/">Back to the start page</a></p>
</main>
{{template "foot"}}`)

	paidPage = webpage.Template("paid", `{{template "head" "Payment finished"}}
<main class="wide">
<h1 id="paid">Back from the payment</h1>
{{if .Message}}<p class="alert" role="alert">{{.Message}}</p>{{else}}
<p class="{{if eq .Status "completed"}}ok{{else}}alert{{end}}" id="status">Checkout <code>{{.SessionID}}</code>: <strong>{{.Status}}</strong></p>
<p>{{if .StateMatches}}The state came back as sent: this redirect belongs to a checkout the demo started.{{else}}The state did not come back as sent: an app would refuse this redirect.{{end}}</p>
<h2>The tenant's billing state</h2>
<p>Route 5 with the app's read key answers for tenant <code>{{.TenantID}}</code>:</p>
<dl id="billing">{{range .Fields}}<dt>{{.Name}}</dt><dd><code>{{.Value}}</code></dd>{{end}}</dl>
{{end}}<p><a href="/">Back to the start page</a></p>
</main>
{{template "foot"}}`)
)

// demoBoard holds the seeded demo for the pages; nil until the seed is done.
type demoBoard = atomic.Pointer[seed.Demo]

// devPages is the module of the all-in-one's development pages at base: the landing page, the
// demo app's callback, sign-up and payment return pages, the mailbox and the example app.
func devPages(base string, mailbox *mail.Mailbox, example *Example, demo *demoBoard) module.Module {
	return module.Module{Name: "devpages", Web: func(context.Context, module.Common) (*module.Site, error) {
		return &module.Site{Register: func(mux *http.ServeMux) {
			mux.Handle(DevMailboxPath, mailbox.Handler(webpage.Template))
			example.register(mux)
			// {$}: only / itself; every other unknown path stays the edge's not-found.
			mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { landing(w, base, demo.Load(), example) })
			mux.HandleFunc("GET "+DevCallbackPath, func(w http.ResponseWriter, r *http.Request) { callback(w, r, base) })
			mux.HandleFunc("GET "+DevSignUpPath, func(w http.ResponseWriter, r *http.Request) { signUp(w, r, demo.Load()) })
			mux.HandleFunc("GET "+DevPaidPath, func(w http.ResponseWriter, r *http.Request) { paid(w, r, base, demo.Load()) })
		}}, nil
	}}
}

// render writes a development page with the hosted pages' headers.
func render(w http.ResponseWriter, code int, page *template.Template, data any) {
	webpage.SetSecurityHeaders(w.Header(), "", "")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = page.Execute(w, data) // the client went away; nothing to tell it
}

func landing(w http.ResponseWriter, base string, demo *seed.Demo, example *Example) {
	examplePath := ""
	if example.Served() {
		examplePath = ExamplePath
	}
	render(w, http.StatusOK, landingPage, map[string]any{
		"Demo": demo, "APIDocs": apidocs.Path, "Mailbox": DevMailboxPath, "Example": examplePath,
		"Pspx": mount.PspxPath + "/", "Pspy": mount.PspyPath + "/", "Base": base,
	})
}

// callback shows the authorization code the hosted login page redirected with, and the command
// that exchanges it.
func callback(w http.ResponseWriter, r *http.Request, base string) {
	q := r.URL.Query()
	render(w, http.StatusOK, callbackPage, map[string]string{
		"Code": q.Get("code"), "State": q.Get("state"), "ClientID": q.Get("client_id"),
		"Nonce": q.Get("nonce"), "RedirectURI": base + DevCallbackPath, "Base": base,
	})
}

func signUp(w http.ResponseWriter, r *http.Request, demo *seed.Demo) {
	if demo == nil {
		http.Redirect(w, r, DevLandingPath, http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, demo.LoginURL(), http.StatusSeeOther)
}

// billingFields are the tenant's fields (route 5) the paid page shows, in this order.
var billingFields = []string{"mode", "paidUntil", "paidUnits", "pspxPriceId", "pspxSubscriptionId", "isFrozen"}

type field struct{ Name, Value string }

// paid is the demo apps' payment return page: billing sent the payer here with the checkout's
// session_id, status and (when the browser still held it) state; the page reads the tenant the
// way the app would, through route 5 with its read key.
func paid(w http.ResponseWriter, r *http.Request, base string, demo *seed.Demo) {
	q := r.URL.Query()
	view := map[string]any{"Status": q.Get("status"), "SessionID": q.Get("session_id")}
	app, ok := demoApp(demo, q.Get("client_id"))
	if !ok {
		view["Message"] = "This page shows the payments of the demo apps only; this one names no demo app."
		render(w, http.StatusNotFound, paidPage, view)
		return
	}
	view["StateMatches"] = q.Get("state") == demo.State
	view["TenantID"] = app.TenantID
	tenant, err := readTenant(r.Context(), base, app)
	if err != nil {
		view["Message"] = "The payment finished, but reading the tenant failed: " + err.Error()
		render(w, http.StatusBadGateway, paidPage, view)
		return
	}
	var fields []field
	for _, name := range billingFields {
		if v, ok := tenant[name]; ok && v != nil {
			fields = append(fields, field{name, fmt.Sprint(v)})
		}
	}
	view["Fields"] = fields
	render(w, http.StatusOK, paidPage, view)
}

// demoApp finds the demo app clientID names: its tenant and read key.
func demoApp(demo *seed.Demo, clientID string) (seed.PspyDemo, bool) {
	switch {
	case demo == nil || clientID == "":
		return seed.PspyDemo{}, false
	case clientID == demo.AppID:
		return seed.PspyDemo{AppID: demo.AppID, ReadKey: demo.ReadKey, TenantID: demo.TenantID}, true
	case clientID == demo.PspyApp.AppID:
		return demo.PspyApp, true
	}
	return seed.PspyDemo{}, false
}

// readTenant is route 5 for app's tenant with its read key, answering the envelope's data.
func readTenant(ctx context.Context, base string, app seed.PspyDemo) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/tenants/"+app.TenantID, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-API-KEY", app.ReadKey)
	req.Header.Set("X-API-KEY-TYPE", "read")
	req.Header.Set("X-CLIENT-ID", app.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = res.Body.Close() }()
	var envelope struct {
		Data map[string]any `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&envelope); err != nil || res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("route 5 answered %d", res.StatusCode)
	}
	return envelope.Data, nil
}
