package contract

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

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
	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
	outsider := e.consoleMember(t, e.other.ProjectID, "outsider-billing@example.test")
	before := e.billingOf(t, e.demo.AppID)
	promotion := before[2].(*billingv1.PromotionList).GetItems()[0].GetId()
	billing := "/console/apps/" + e.demo.AppID + "/billing"
	promotionPage := billing + "/promotions/" + promotion

	for _, page := range []string{billing, promotionPage, promotionPage + "?cursor=abc"} {
		if p := outsider.get(page); p.status != http.StatusForbidden || !strings.Contains(p.body, `id="problem"`) {
			t.Errorf("the outsider's GET %s = %d, want the 403 refusal page:\n%s", page, p.status, p.body)
		}
	}
	for _, page := range []string{billing, promotionPage} {
		if p := owner.get(page); p.status != http.StatusOK || strings.Contains(p.body, `id="problem"`) {
			t.Errorf("the owner's GET %s = %d:\n%s", page, p.status, p.body)
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
		if p := outsider.post(a.path, a.form); p.status != http.StatusForbidden || !strings.Contains(p.body, `id="problem"`) {
			t.Errorf("the outsider's %s on %s = %d (to %q), want the 403 refusal page", a.form.Get("action"), a.path, p.status, p.location)
		}
	}

	// The outsider's own app with this app's promotion: billing finds no such promotion of theirs.
	own := "/console/apps/" + e.other.AppID + "/billing/promotions/" + promotion
	if p := outsider.get(own); p.status != http.StatusNotFound {
		t.Errorf("the outsider's own app with this promotion = %d, want 404", p.status)
	}
	for _, form := range []url.Values{{"action": {"deactivate"}}, {"action": {"limits"}, "max_redemptions": {"1"}}} {
		if p := outsider.post(own, form); p.status != http.StatusNotFound {
			t.Errorf("the outsider's %s of this promotion through their app = %d, want 404", form.Get("action"), p.status)
		}
	}

	after := e.billingOf(t, e.demo.AppID)
	for i := range before {
		if !proto.Equal(before[i], after[i]) {
			t.Errorf("the app's billing changed:\nbefore %v\nafter  %v", before[i], after[i])
		}
	}
	// The owner's same form is taken, so the refusals above were the outsider's alone.
	if p := owner.post(promotionPage, url.Values{"action": {"limits"}, "max_redemptions": {"0"}}); p.status != http.StatusSeeOther ||
		!strings.HasPrefix(p.location, promotionPage) {
		t.Errorf("the owner's limits = %d to %q", p.status, p.location)
	}
}
