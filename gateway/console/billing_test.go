package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

var (
	billingURL   = Path + "/apps/" + testApp + "/billing"
	promotionURL = billingURL + "/promotions/" + promoID
)

// onlyBillingCall is the one call of method the fakes received, failing the test otherwise; every
// billing call must carry the member's operator token.
func onlyBillingCall[T proto.Message](t *testing.T, f *fake, method string) T {
	t.Helper()
	calls := f.received(method)
	if len(calls) != 1 {
		t.Fatalf("%s called %d times, want once", method, len(calls))
	}
	if calls[0].bearer != "Bearer operator-token-1" {
		t.Errorf("%s carried %q, want the member's operator token", method, calls[0].bearer)
	}
	return calls[0].req.(T)
}

func TestTheBillingPageShowsTheConnectionWithoutSecretsTheCatalogThePromotionsAndTheReferralReward(t *testing.T) {
	f, _, b := newBillingConsole(t)
	rec := b.get(billingURL)
	if rec.Code != http.StatusOK {
		t.Fatalf("billing page = %d:\n%s", rec.Code, rec.Body)
	}
	page := rec.Body.String()
	for _, want := range []string{
		`<tr data-connection="conn_0123456789abcdef"><td>pspx · <strong>used by checkouts</strong>`,
		"test: stored (never shown)<br>live: —", // keys: which modes have one
		"test: 2<br>live: 0", // webhook secrets per mode
		"12.50 EUR", "1 month", "19.00 %",
		`href="/console/apps/` + testApp + `/billing/promotions/` + promoID + `"`,
		"Welcome &lt;gift&gt;", "1 / 10", "0 / unlimited", "deactivated",
		`<option value="` + promoID + `" selected>WELCOME`,
		`id="settings-form"`, `<option value="conn_0123456789abcdef" selected>pspx · conn_0123456789abcdef`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the billing page lacks %q", want)
		}
	}
	for _, method := range []string{"GetAppBilling", "ListCatalog", "ListAppPromotions"} {
		calls := f.received(method)
		if len(calls) != 1 || calls[0].bearer != "Bearer operator-token-1" {
			t.Errorf("%s calls = %+v, want one with the member's token", method, calls)
		}
	}
	if got := onlyBillingCall[*billingv1.ListCatalogRequest](t, f, "ListCatalog").GetAppId(); got != testApp {
		t.Errorf("ListCatalog named app %q", got)
	}
}

func TestTheAppPageLinksToItsBillingPage(t *testing.T) {
	_, _, b := newBillingConsole(t)
	rec := b.get(Path + "/apps/" + testApp)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `href="`+billingURL+`" id="billing-link"`) {
		t.Fatalf("app page = %d, without the billing link:\n%s", rec.Code, rec.Body)
	}
}

func TestCreatingAPromotionSendsWhatItGrantsAndItsLimitsAndOpensItsPage(t *testing.T) {
	f, _, b := newBillingConsole(t)
	rec := b.post(billingURL, url.Values{"action": {"promotion"}, "code": {" launch-2027 "}, "name": {"Launch"},
		"description": {"For the launch"}, "free_units": {"25"}, "free_days": {""}, "max_redemptions": {"100"},
		"valid_from": {"2027-01-01"}, "valid_until": {"2027-02-01T12:00:00+01:00"}})
	want := billingURL + "/promotions/" + newPromotionID + "?notice=promotionCreated"
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
		t.Fatalf("create = %d %q, want a redirect to %q:\n%s", rec.Code, rec.Header().Get("Location"), want, rec.Body)
	}
	got := onlyBillingCall[*billingv1.CreatePromotionRequest](t, f, "CreatePromotion")
	sent := &billingv1.CreatePromotionRequest{AppId: testApp, Code: "launch-2027", Name: "Launch", Description: "For the launch",
		FreeUnits: 25, FreeDays: 0, MaxRedemptions: 100, ValidFrom: "2027-01-01", ValidUntil: "2027-02-01T12:00:00+01:00"}
	if !proto.Equal(got, sent) {
		t.Errorf("CreatePromotion = %v, want %v", got, sent)
	}
	rec = b.get(billingURL + "/promotions/" + newPromotionID + "?notice=promotionCreated")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "The promotion code was created.") ||
		!strings.Contains(rec.Body.String(), `<code id="promotion-code">LAUNCH-2027</code>`) {
		t.Errorf("the new promotion's page = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestTheCatalogAndReferralFormsSendTheirValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		form   url.Values
		method string
		want   proto.Message
	}{
		{"a monthly price", url.Values{"action": {"price"}, "product_name": {"Seats"}, "amount": {"1250"}, "currency": {"eur"}, "interval": {"1 month"}},
			"CreateCatalogPrice", &billingv1.CreateCatalogPriceRequest{AppId: testApp, ProductName: "Seats", Amount: 1250, Currency: "EUR", Interval: "1 month"}},
		{"a one-time price", url.Values{"action": {"price"}, "product_name": {"Pack"}, "amount": {"99"}, "currency": {"USD"}},
			"CreateCatalogPrice", &billingv1.CreateCatalogPriceRequest{AppId: testApp, ProductName: "Pack", Amount: 99, Currency: "USD"}},
		{"an inclusive tax rate", url.Values{"action": {"taxRate"}, "display_name": {"VAT"}, "basis_points": {"1900"}, "inclusive": {"yes"}},
			"CreateCatalogTaxRate", &billingv1.CreateCatalogTaxRateRequest{AppId: testApp, DisplayName: "VAT", BasisPoints: 1900, Inclusive: true}},
		{"a referral reward", url.Values{"action": {"referral"}, "referral_promotion": {otherPromoID}},
			"UpdateAppSettings", &billingv1.UpdateAppSettingsRequest{AppId: testApp, ReferralPromotionId: proto.String(otherPromoID)}},
		{"no referral reward", url.Values{"action": {"referral"}, "referral_promotion": {""}},
			"UpdateAppSettings", &billingv1.UpdateAppSettingsRequest{AppId: testApp, ReferralPromotionId: proto.String("")}},
		{"the billing settings, every one sent so an emptied text clears it", url.Values{"action": {"settings"}, "connection_id": {otherPromoID},
			"payment_return_url": {"https://app.example/paid"}, "failed_payments_to_freeze": {"5"}, "one_time_valid_days": {"30"}, "renewal_line": {""}},
			"UpdateAppSettings", &billingv1.UpdateAppSettingsRequest{AppId: testApp, ConnectionId: proto.String(otherPromoID),
				PaymentReturnUrl: proto.String("https://app.example/paid"), FailedPaymentsToFreeze: proto.Int32(5), OneTimePaymentValidDays: proto.Int32(30),
				RenewalLineDescription: proto.String("")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, b := newBillingConsole(t)
			rec := b.post(billingURL, tc.form)
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != billingURL+"?notice=saved" {
				t.Fatalf("post = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
			}
			if got := onlyBillingCall[proto.Message](t, f, tc.method); !proto.Equal(got, tc.want) {
				t.Errorf("%s = %v, want %v", tc.method, got, tc.want)
			}
		})
	}
}

func TestAPromotionsPageShowsItsRedemptionsAndPagesOnWithBillingsCursor(t *testing.T) {
	f, _, b := newBillingConsole(t)
	rec := b.get(promotionURL)
	page := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("promotion page = %d:\n%s", rec.Code, page)
	}
	for _, want := range []string{
		`<tr data-tenant="` + billingTenant + `"><td>2026-11-20 09:15 UTC</td>`, "redeemed", "5 free units, 0 free days",
		`href="` + promotionURL + `?cursor=` + fixtureCursor + `" id="older"`,
		`value="2026-11-01"`, `value="2026-12-31T12:30:00Z"`, // a midnight bound as its day, another as stored
		`id="deactivate"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the promotion page lacks %q", want)
		}
	}
	first := f.received("ListPromotionRedemptions")[0].req.(*billingv1.ListPromotionRedemptionsRequest)
	if first.GetAppId() != testApp || first.GetPromotionId() != promoID || first.GetCursor() != "" || first.GetLimit() != redemptionsPage {
		t.Errorf("first page request = %v", first)
	}
	rec = b.get(promotionURL + "?cursor=" + fixtureCursor)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "referral reward for (<code>referred-tenant</code>)") ||
		strings.Contains(rec.Body.String(), `id="older"`) {
		t.Errorf("second page = %d:\n%s", rec.Code, rec.Body)
	}
	if got := f.received("ListPromotionRedemptions")[1].req.(*billingv1.ListPromotionRedemptionsRequest).GetCursor(); got != fixtureCursor {
		t.Errorf("second page asked with cursor %q", got)
	}
}

func TestEditingLimitsSendsEveryLimitSoAnEmptyBoundRemovesIt(t *testing.T) {
	f, fb, b := newBillingConsole(t)
	rec := b.post(promotionURL, url.Values{"action": {"limits"}, "max_redemptions": {"0"}, "valid_from": {""}, "valid_until": {"2027-03-01"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != promotionURL+"?notice=saved" {
		t.Fatalf("limits = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	got := onlyBillingCall[*billingv1.UpdatePromotionLimitsRequest](t, f, "UpdatePromotionLimits")
	want := &billingv1.UpdatePromotionLimitsRequest{AppId: testApp, PromotionId: promoID, MaxRedemptions: proto.Int32(0),
		ValidFrom: proto.String(""), ValidUntil: proto.String("2027-03-01")}
	if !proto.Equal(got, want) {
		t.Errorf("UpdatePromotionLimits = %v, want %v", got, want)
	}
	if p := fb.promotions[0]; p.GetMaxRedemptions() != 0 || p.GetValidFrom() != "" {
		t.Errorf("the promotion kept %v", p)
	}
}

func TestDeactivatingAndActivatingAPromotionSwitchesItAtBilling(t *testing.T) {
	for _, tc := range []struct {
		action, notice string
		active         bool
	}{{"deactivate", "deactivated", false}, {"activate", "activated", true}} {
		t.Run(tc.action, func(t *testing.T) {
			f, _, b := newBillingConsole(t)
			rec := b.post(promotionURL, url.Values{"action": {tc.action}})
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != promotionURL+"?notice="+tc.notice {
				t.Fatalf("%s = %d %q:\n%s", tc.action, rec.Code, rec.Header().Get("Location"), rec.Body)
			}
			got := onlyBillingCall[*billingv1.SetPromotionActiveRequest](t, f, "SetPromotionActive")
			if got.GetAppId() != testApp || got.GetPromotionId() != promoID || got.GetActive() != tc.active {
				t.Errorf("SetPromotionActive = %v, want active %v", got, tc.active)
			}
		})
	}
}

// A refusal of billing's is a message in the console's page with the status it deserves, the
// refused field named; never a 5xx, never billing's own text.
func TestARefusedBillingCallIsAMessageOnThePageNeverA5xx(t *testing.T) {
	invalid, _ := status.New(codes.InvalidArgument, "maxRedemptions below the uses made (internal detail)").
		WithDetails(&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "maxRedemptions"}}})
	for _, tc := range []struct {
		name, method, target string
		form                 url.Values
		err                  error
		code                 int
		shows                string
	}{
		{"another project's app", "GetApp", billingURL, nil, status.Error(codes.PermissionDenied, "other project"), http.StatusForbidden, "not allowed"},
		{"billing refuses the member", "GetAppBilling", billingURL, nil, status.Error(codes.PermissionDenied, "other project"), http.StatusForbidden, "not allowed"},
		{"a maximum below the uses", "UpdatePromotionLimits", promotionURL, url.Values{"action": {"limits"}, "max_redemptions": {"0"}},
			invalid.Err(), http.StatusBadRequest, "(maxRedemptions)"},
		{"a code taken", "CreatePromotion", billingURL, url.Values{"action": {"promotion"}, "code": {"WELCOME"}, "name": {"x"}, "free_units": {"1"}},
			status.Error(codes.AlreadyExists, "taken"), http.StatusConflict, "cannot be done"},
		{"a promotion of another app", "SetPromotionActive", promotionURL, url.Values{"action": {"deactivate"}},
			status.Error(codes.NotFound, "no promotion"), http.StatusNotFound, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, b := newBillingConsole(t)
			f.errs[tc.method] = tc.err
			rec := b.get(tc.target)
			if tc.form != nil {
				rec = b.post(tc.target, tc.form)
			}
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.shows) || strings.Contains(rec.Body.String(), "internal detail") {
				t.Errorf("%s refused: %d, want %d showing %q:\n%s", tc.method, rec.Code, tc.code, tc.shows, rec.Body)
			}
		})
	}
}

func TestAPromotionTheAppDoesNotListIsNotFoundAndItsRedemptionsAreNotAsked(t *testing.T) {
	f, _, b := newBillingConsole(t)
	rec := b.get(billingURL + "/promotions/" + newPromotionID)
	if rec.Code != http.StatusNotFound || len(f.received("ListPromotionRedemptions")) != 0 {
		t.Errorf("unknown promotion = %d, redemptions asked %d times", rec.Code, len(f.received("ListPromotionRedemptions")))
	}
}

// A broken path or form is refused with its field named before billing is asked anything.
func TestBrokenBillingRequestsAreRefusedBeforeAnyCall(t *testing.T) {
	for _, tc := range []struct {
		name, target string
		form         url.Values
		field        string
	}{
		{"a promotion id that is no UUID", billingURL + "/promotions/WELCOME", nil, "(promotion)"},
		{"a cursor with foreign characters", promotionURL + "?cursor=a%2Fb", nil, "(cursor)"},
		{"an unknown action", billingURL, url.Values{"action": {"delete"}}, "(action)"},
		{"a negative amount", billingURL, url.Values{"action": {"price"}, "product_name": {"x"}, "amount": {"-5"}, "currency": {"EUR"}}, "(amount)"},
		{"limits with a date that is none", promotionURL, url.Values{"action": {"limits"}, "valid_until": {"31.12.2026"}}, "(valid_until)"},
		{"a referral promotion that is no UUID", billingURL, url.Values{"action": {"referral"}, "referral_promotion": {"WELCOME"}}, "(referral_promotion)"},
		{"settings freezing after no failure", billingURL, url.Values{"action": {"settings"}, "connection_id": {promoID},
			"failed_payments_to_freeze": {"0"}, "one_time_valid_days": {"365"}}, "(failed_payments_to_freeze)"},
		{"settings with a one-time validity past ten years", billingURL, url.Values{"action": {"settings"}, "connection_id": {promoID},
			"failed_payments_to_freeze": {"3"}, "one_time_valid_days": {"3661"}}, "(one_time_valid_days)"},
		{"settings naming no connection", billingURL, url.Values{"action": {"settings"}, "failed_payments_to_freeze": {"3"}, "one_time_valid_days": {"365"}}, "(connection_id)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, b := newBillingConsole(t)
			var rec *httptest.ResponseRecorder
			if tc.form != nil {
				rec = b.post(tc.target, tc.form)
			} else {
				rec = b.get(tc.target)
			}
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.field) {
				t.Errorf("%d, want 400 naming %s:\n%s", rec.Code, tc.field, rec.Body)
			}
			for _, method := range []string{"ListPromotionRedemptions", "CreateCatalogPrice", "UpdatePromotionLimits", "UpdateAppSettings"} {
				if n := len(f.received(method)); n != 0 {
					t.Errorf("%s was called %d times", method, n)
				}
			}
		})
	}
}
