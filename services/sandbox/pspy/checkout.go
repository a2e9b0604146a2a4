package pspy

import (
	"bytes"
	"html/template"
	"net/http"
	"slices"
)

// outcome is a choice of the test checkout page, as the provider's own test page offers them.
type outcome struct {
	value string
	label string
	// firstOnly outcomes only make sense where a mandate is established.
	firstOnly bool
}

const failLater = "paid-recurring-fails"

var outcomes = []outcome{
	{value: "paid", label: "Paid"},
	{value: failLater, label: "Paid, later recurring payments fail", firstOnly: true},
	{value: "failed", label: "Failed"},
	{value: "canceled", label: "Canceled"},
	{value: "expired", label: "Expired"},
	{value: "open", label: "Open: return without deciding"},
}

type option struct {
	Value   string
	Label   string
	Checked bool
}

type pageData struct {
	Found       bool
	Open        bool
	Amount      string
	Description string
	Status      string
	Error       string
	ReturnURL   string
	Methods     []option
	Outcomes    []option
}

var checkoutTemplate = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Test payment · pspy sandbox</title>
<style>
body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem;color:#222}
.amount{font-size:1.75rem;margin:.25rem 0}
fieldset{margin:1rem 0;border:1px solid #ccc;border-radius:.5rem}
label{display:block;padding:.3rem 0}
button{font-size:1rem;padding:.5rem 1.5rem}
.error{color:#a00}
</style>
</head>
<body>
<h1>Test payment</h1>
{{if .Found}}
<p class="amount" id="amount">{{.Amount}}</p>
<p id="description">{{.Description}}</p>
{{if .Open}}
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post">
<fieldset>
<legend>Payment method</legend>
{{range .Methods}}<label><input type="radio" name="method" value="{{.Value}}" required{{if .Checked}} checked{{end}}> {{.Label}}</label>
{{end}}</fieldset>
<fieldset>
<legend>Payment status</legend>
{{range .Outcomes}}<label><input type="radio" name="outcome" value="{{.Value}}" required{{if .Checked}} checked{{end}}> {{.Label}}</label>
{{end}}</fieldset>
<button type="submit">Continue</button>
</form>
{{else}}
<p>This payment is <strong id="status">{{.Status}}</strong>.</p>
{{if .ReturnURL}}<p><a href="{{.ReturnURL}}">Return to the website</a></p>{{end}}
{{end}}
{{else}}
<p>This payment does not exist.</p>
{{end}}
</body>
</html>
`))

// checkoutPage shows an open payment's choices, or the status of one that is no longer open.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[r.PathValue("id")]
	if !ok {
		s.render(w, http.StatusNotFound, pageData{})
		return
	}
	s.render(w, http.StatusOK, s.pageData(p, "", ""))
}

// checkoutSubmit applies the payer's choice, records the webhook call and sends the payer back.
func (s *Server) checkoutSubmit(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	formErr := r.ParseForm()
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.payments[r.PathValue("id")]
	switch {
	case !ok:
		s.render(w, http.StatusNotFound, pageData{})
		return
	case p.status != "open":
		s.render(w, http.StatusConflict, s.pageData(p, "", ""))
		return
	case formErr != nil:
		s.render(w, http.StatusBadRequest, s.pageData(p, "", "The form could not be read."))
		return
	}
	chosen := r.PostForm.Get("outcome")
	i := slices.IndexFunc(outcomes, func(o outcome) bool { return o.value == chosen })
	if i < 0 || outcomes[i].firstOnly && p.sequenceType != "first" {
		s.render(w, http.StatusBadRequest, s.pageData(p, "", "Choose one of the payment statuses."))
		return
	}
	method := r.PostForm.Get("method")
	if allowed := p.allowedMethods(); len(allowed) == 1 && method == "" {
		method = allowed[0]
	} else if !slices.Contains(allowed, method) {
		s.render(w, http.StatusBadRequest, s.pageData(p, method, "Choose one of the payment methods."))
		return
	}

	now := s.clock.Now()
	switch chosen {
	case "paid", failLater:
		p.status, p.paidAt, p.method = "paid", now, method
		if p.sequenceType == "first" {
			md := s.newMandate(s.customers[p.customerID], method, chosen == failLater, now)
			p.mandateID = md.id
		}
	case "failed":
		p.status, p.failedAt, p.method = "failed", now, method
	case "canceled":
		p.status, p.canceledAt = "canceled", now
	case "expired":
		p.status, p.expiredAt = "expired", now
	}
	if chosen != "open" {
		s.notify(p, now)
	}
	s.log.Debug("pspy checkout", "payment", p.id, "outcome", chosen, "method", method)
	target := p.redirectURL
	if chosen == "canceled" && p.cancelURL != "" {
		target = p.cancelURL
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// allowedMethods are the methods the payer may choose on the page.
func (p *payment) allowedMethods() []string {
	if p.methods == nil {
		return allMethods
	}
	return p.methods
}

// pageData fills the page for p; method is the payer's last choice, if any.
func (s *Server) pageData(p *payment, method, errText string) pageData {
	d := pageData{
		Found: true, Open: p.status == "open", Amount: p.amount.String(), Description: p.description,
		Status: p.status, Error: errText, ReturnURL: p.redirectURL,
	}
	allowed := p.allowedMethods()
	if !slices.Contains(allowed, method) {
		method = allowed[0]
	}
	for _, m := range allowed {
		d.Methods = append(d.Methods, option{Value: m, Label: methodLabels[m], Checked: m == method})
	}
	for _, o := range outcomes {
		if o.firstOnly && p.sequenceType != "first" {
			continue
		}
		d.Outcomes = append(d.Outcomes, option{Value: o.value, Label: o.label, Checked: o.value == "paid"})
	}
	return d
}

// render writes the page with a policy that loads nothing from elsewhere. It sets no form-action:
// browsers check it against every redirect that follows the form's post, and the return URL may
// itself redirect anywhere (Berth's return page sends the payer on to the app).
func (s *Server) render(w http.ResponseWriter, status int, d pageData) {
	var buf bytes.Buffer
	if err := checkoutTemplate.Execute(&buf, d); err != nil {
		http.Error(w, "the checkout page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}
