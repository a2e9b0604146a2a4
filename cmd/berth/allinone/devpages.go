package allinone

import (
	"context"
	"html/template"
	"net/http"

	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/module"
)

// DevCallbackPath is the demo app's redirect URI in the all-in-one run: after signing in on the
// hosted login page, the browser lands here and the page shows the authorization code with the
// command that exchanges it. Production deployments have no such page; apps register their own.
const DevCallbackPath = "/dev/callback"

var devCallbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Berth demo callback</title>
<style>body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}
pre{background:#f4f4f4;padding:1rem;white-space:pre-wrap;word-break:break-all}</style></head>
<body><h1>Signed in</h1>
<p>The hosted login page redirected here with an authorization code (valid for 60 seconds, single use).</p>
<dl><dt>code</dt><dd><code>{{.Code}}</code></dd><dt>state</dt><dd><code>{{.State}}</code></dd></dl>
<p>Exchange it for tokens:</p>
<pre>curl -s -X POST -H 'Content-Type: application/json' \
  -d '{"client_id":"{{.ClientID}}","grant_type":"authorization_code","code":"{{.Code}}","redirect_uri":"{{.RedirectURI}}","nonce":"{{.Nonce}}"}' \
  {{.Base}}/api/v1/tokens</pre>
</body></html>
`))

// DevMailboxPath shows the emails the all-in-one run "sent" (its mail goes to an in-memory
// mailbox, and each send is logged).
const DevMailboxPath = "/dev/mailbox"

// devPages is the module of the all-in-one's development pages: the demo app's callback page, the
// mailbox and the example app, at base.
func devPages(base string, mailbox *mail.Mailbox, example *Example) module.Module {
	return module.Module{Name: "devpages", Web: func(context.Context, module.Common) (*module.Site, error) {
		return &module.Site{Register: func(mux *http.ServeMux) {
			mux.Handle(DevMailboxPath, mailbox.Handler())
			example.register(mux)
			mux.HandleFunc("GET "+DevCallbackPath, func(w http.ResponseWriter, r *http.Request) { callback(w, r, base) })
		}}, nil
	}}
}

// callback shows the authorization code the hosted login page redirected with, and the command
// that exchanges it.
func callback(w http.ResponseWriter, r *http.Request, base string) {
	q := r.URL.Query()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	_ = devCallbackPage.Execute(w, map[string]string{
		"Code": q.Get("code"), "State": q.Get("state"), "ClientID": q.Get("client_id"),
		"Nonce": q.Get("nonce"), "RedirectURI": base + DevCallbackPath, "Base": base,
	})
}
