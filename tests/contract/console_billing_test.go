package contract

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/cmd/berth/seed"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// consoleMember is a browser signed in to the console as one project member.
type consoleMember struct {
	t      *testing.T
	base   string
	client *http.Client
}

// signInToConsole signs email in through the console's own sign-in form.
func (e *env) signInToConsole(t *testing.T, email, password string) *consoleMember {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	m := &consoleMember{t: t, base: e.stack.BaseURL, client: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	m.get("/console/sign-in")
	status, _, location := m.post("/console/sign-in", url.Values{"email": {email}, "password": {password}})
	if status != http.StatusSeeOther || location != "/console" {
		t.Fatalf("%s's console sign-in = %d to %q", email, status, location)
	}
	return m
}

// csrf is the token the console's CSRF cookie holds.
func (m *consoleMember) csrf() string {
	u, _ := url.Parse(m.base + "/console")
	for _, k := range m.client.Jar.Cookies(u) {
		if k.Name == "berth_console_csrf" {
			return k.Value
		}
	}
	m.t.Fatal("no console CSRF cookie")
	return ""
}

func (m *consoleMember) do(req *http.Request) (int, string, string) {
	m.t.Helper()
	res, err := m.client.Do(req)
	if err != nil {
		m.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer func() { _ = res.Body.Close() }()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body), res.Header.Get("Location")
}

func (m *consoleMember) get(path string) (int, string) {
	m.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, m.base+path, nil)
	status, body, _ := m.do(req)
	return status, body
}

// post sends form with the CSRF token, answering the status, the page and where it redirects.
func (m *consoleMember) post(path string, form url.Values) (int, string, string) {
	m.t.Helper()
	form.Set("csrf_token", m.csrf())
	req, _ := http.NewRequest(http.MethodPost, m.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return m.do(req)
}

// outsiderInConsole makes someone a member of the second project the way the console's
// members join (the mailed invitation, accepted with a password) and signs them in.
func (e *env) outsiderInConsole(t *testing.T) *consoleMember {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	email, password := "outsider-billing@example.test", "an outsider's long passphrase 7"
	if _, err := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: e.other.ProjectID, Email: email, Name: "Outsider"}); err != nil {
		t.Fatal(err)
	}
	var token string
	for _, msg := range e.stack.Mailbox.Messages() {
		if tok := seed.InvitationToken(msg.Text); msg.To == email && tok != "" {
			token = tok
		}
	}
	if token == "" {
		t.Fatalf("no invitation mailed to %s", email)
	}
	if _, err := e.admin.Members.AcceptInvitation(ctx, &identityv1.AcceptInvitationRequest{Token: token, Name: "Outsider", Password: password,
		ClientAddress: "127.0.0.1", UserAgent: "contract test"}); err != nil {
		t.Fatal(err)
	}
	return e.signInToConsole(t, email, password)
}

// billingOf is everything of the app's billing a console page could change.
func (e *env) billingOf(t *testing.T, appID string) []proto.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := e.admin.Billing.GetAppBilling(ctx, &billingv1.GetAppBillingRequest{AppId: appID})
	if err != nil {
		t.Fatal(err)
	}
	catalog, err := e.admin.Billing.ListCatalog(ctx, &billingv1.ListCatalogRequest{AppId: appID})
	if err != nil {
		t.Fatal(err)
	}
	promotions, err := e.admin.Billing.ListAppPromotions(ctx, &billingv1.ListPromotionsRequest{AppId: appID})
	if err != nil {
		t.Fatal(err)
	}
	if len(promotions.GetItems()) == 0 {
		t.Fatalf("app %s has no promotion to try", appID)
	}
	return []proto.Message{b, catalog, promotions}
}

// A member of another project gets the console's refusal page for every billing page and every
// billing action of this project's app, and nothing of its billing changes; this project's member
// sees the same pages. Naming their own app with this app's promotion finds nothing either.
func TestAMemberOfAnotherProjectCannotSeeOrChangeThisProjectsBillingInTheConsole(t *testing.T) {
	e := start(t, "memory")
	if e.demo.Console.Email == "" {
		t.Fatal("the demo project has no console member")
	}
	owner := e.signInToConsole(t, e.demo.Console.Email, e.demo.Console.Password)
	outsider := e.outsiderInConsole(t)
	before := e.billingOf(t, e.demo.AppID)
	promotion := before[2].(*billingv1.PromotionList).GetItems()[0].GetId()
	billing := "/console/apps/" + e.demo.AppID + "/billing"
	promotionPage := billing + "/promotions/" + promotion

	for _, page := range []string{billing, promotionPage, promotionPage + "?cursor=abc"} {
		if status, body := outsider.get(page); status != http.StatusForbidden || !strings.Contains(body, `id="problem"`) {
			t.Errorf("the outsider's GET %s = %d, want the 403 refusal page:\n%s", page, status, body)
		}
	}
	for _, page := range []string{billing, promotionPage} {
		if status, body := owner.get(page); status != http.StatusOK || strings.Contains(body, `id="problem"`) {
			t.Errorf("the owner's GET %s = %d:\n%s", page, status, body)
		}
	}

	actions := []struct {
		path string
		form url.Values
	}{
		{billing, url.Values{"action": {"referral"}, "referral_promotion": {promotion}}},
		{billing, url.Values{"action": {"price"}, "product_name": {"Stolen"}, "amount": {"100"}, "currency": {"EUR"}}},
		{billing, url.Values{"action": {"taxRate"}, "display_name": {"Stolen"}, "basis_points": {"100"}}},
		{billing, url.Values{"action": {"promotion"}, "code": {"STOLEN"}, "name": {"Stolen"}, "free_units": {"1000"}}},
		{promotionPage, url.Values{"action": {"limits"}, "max_redemptions": {"1"}}},
		{promotionPage, url.Values{"action": {"deactivate"}}},
		{promotionPage, url.Values{"action": {"activate"}}},
	}
	for _, a := range actions {
		if status, body, location := outsider.post(a.path, a.form); status != http.StatusForbidden || !strings.Contains(body, `id="problem"`) {
			t.Errorf("the outsider's %s on %s = %d (to %q), want the 403 refusal page", a.form.Get("action"), a.path, status, location)
		}
	}

	// The outsider's own app with this app's promotion: billing finds no such promotion of theirs.
	own := "/console/apps/" + e.other.AppID + "/billing/promotions/" + promotion
	if status, _ := outsider.get(own); status != http.StatusNotFound {
		t.Errorf("the outsider's own app with this promotion = %d, want 404", status)
	}
	for _, form := range []url.Values{{"action": {"deactivate"}}, {"action": {"limits"}, "max_redemptions": {"1"}}} {
		if status, _, _ := outsider.post(own, form); status != http.StatusNotFound {
			t.Errorf("the outsider's %s of this promotion through their app = %d, want 404", form.Get("action"), status)
		}
	}

	after := e.billingOf(t, e.demo.AppID)
	for i := range before {
		if !proto.Equal(before[i], after[i]) {
			t.Errorf("the app's billing changed:\nbefore %v\nafter  %v", before[i], after[i])
		}
	}
	// The owner's same form is taken, so the refusals above were the outsider's alone.
	if status, _, location := owner.post(promotionPage, url.Values{"action": {"limits"}, "max_redemptions": {"0"}}); status != http.StatusSeeOther ||
		!strings.HasPrefix(location, promotionPage) {
		t.Errorf("the owner's limits = %d to %q", status, location)
	}
}
