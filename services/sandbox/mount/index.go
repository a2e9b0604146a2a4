package mount

import (
	"html/template"
	"net/http"
)

// index is a sandbox's page for a person who opens its base URL in a browser: the API there
// answers machines only (its not-found, in the provider's JSON, at the root), so this page says
// what the sandbox offers and where.
type index struct {
	Name, Base, API, Pay string
	Calls                []string
}

var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Name}} sandbox</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}code{overflow-wrap:anywhere}</style>
</head><body>
<h1>The {{.Name}} sandbox</h1>
<p>A stand-in for the payment provider {{.Name}}, for development and tests: nothing is charged.</p>
<h2>API</h2>
<p>Base URL <code>{{.Base}}</code>; {{.API}}. It answers:</p>
<ul>{{range .Calls}}<li><code>{{.}}</code></li>{{end}}</ul>
<h2>Checkout pages</h2>
<p>A checkout's page is <code>{{.Base}}/checkout/&lt;id&gt;</code>, where the payer {{.Pay}}.</p>
<h2>Controls shared by both sandboxes</h2>
<ul>
<li><code>POST {{.Clock}}</code> with <code>{"seconds":N}</code> moves the sandboxes' clock on (renewals, webhooks)</li>
<li><code>GET {{.Deliveries}}</code> lists the webhook deliveries (JSON)</li>
<li><code>{{.Faults}}</code> makes deliveries fail on purpose</li>
</ul>
</body></html>
`))

// serveIndex answers the page of the sandbox described by ix.
func serveIndex(ix index) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		_ = indexPage.Execute(w, struct {
			index
			Clock, Deliveries, Faults string
		}{ix, ClockPath, DeliveriesPath, FaultsPath}) // the client went away; nothing to tell it
	}
}
