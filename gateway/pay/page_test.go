package pay

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// fakeBilling answers the page's calls (billing's, and identity's DescribeApp) and records what it
// was asked.
type fakeBilling struct {
	openErr, returnErr error
	branding           *identityv1.AppBranding // of the app appID; every other app is unknown
	described          []string
	providerURL        string
	redirectURL        string
	opened             []*billingv1.OpenCheckoutRequest
	returned           []*billingv1.ReturnCheckoutRequest
}

func (f *fakeBilling) OpenCheckout(_ context.Context, in *billingv1.OpenCheckoutRequest, _ ...grpc.CallOption) (*billingv1.OpenedCheckout, error) {
	f.opened = append(f.opened, in)
	if f.openErr != nil {
		return nil, f.openErr
	}
	return &billingv1.OpenedCheckout{ProviderUrl: f.providerURL}, nil
}

func (f *fakeBilling) DescribeApp(_ context.Context, in *identityv1.DescribeAccountRequest, _ ...grpc.CallOption) (*identityv1.LoginContext, error) {
	f.described = append(f.described, in.GetClientId())
	if in.GetClientId() != appID {
		return nil, status.Error(codes.InvalidArgument, "unknown client_id")
	}
	return &identityv1.LoginContext{AppId: appID, AppName: "Shop", Branding: f.branding}, nil
}

func (f *fakeBilling) ReturnCheckout(_ context.Context, in *billingv1.ReturnCheckoutRequest, _ ...grpc.CallOption) (*billingv1.ReturnedCheckout, error) {
	f.returned = append(f.returned, in)
	if f.returnErr != nil {
		return nil, f.returnErr
	}
	return &billingv1.ReturnedCheckout{RedirectUrl: f.redirectURL, Status: "completed"}, nil
}

const (
	appID     = "0b8e0c8e-59a2-4c4e-9a39-2f3a1b2c3d4e"
	sessionID = "7d1f4a52-2c63-4d0e-8a8e-9c0b1a2d3e4f"
	hash      = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
)

var state = strings.Repeat("s", 64)

func link(over map[string]string) string {
	q := map[string]string{"client_id": appID, "type": "payment", "session_id": sessionID, "hash": hash, "state": state}
	for k, v := range over {
		q[k] = v
	}
	var parts []string
	for _, k := range []string{"client_id", "type", "session_id", "hash", "state"} {
		parts = append(parts, k+"="+q[k])
	}
	return Path + "?" + strings.Join(parts, "&")
}

func serve(h http.HandlerFunc, target string, cookies ...*http.Cookie) *http.Response {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	h(rec, req)
	return rec.Result()
}

func TestPaymentPageRefusesMalformedLinksWithoutAskingBilling(t *testing.T) {
	for name, over := range map[string]map[string]string{
		"another type":        {"type": "setup"},
		"client id not UUID":  {"client_id": "app"},
		"session id not UUID": {"session_id": "x"},
		"short hash":          {"hash": "abc"},
		"upper-case hash":     {"hash": strings.ToUpper(hash)},
		"short state":         {"state": "abc"},
		"state with %00":      {"state": strings.Repeat("s", 61) + "%00"},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeBilling{providerURL: "https://pay.example/cs_1"}
			res := serve(New(f, f, slog.New(slog.DiscardHandler)).Open, link(over))
			if res.StatusCode != http.StatusBadRequest || res.Header.Get("Location") != "" || len(f.opened) != 0 {
				t.Fatalf("status %d, location %q, billing asked %d times", res.StatusCode, res.Header.Get("Location"), len(f.opened))
			}
			if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Fatalf("policy %q", csp)
			}
		})
	}
}

func TestPaymentPageForwardsAValidLinkAndBindsTheStateToTheBrowser(t *testing.T) {
	f := &fakeBilling{providerURL: "https://pay.example/checkout/cs_1"}
	res := serve(New(f, f, slog.New(slog.DiscardHandler)).Open, link(nil))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != f.providerURL {
		t.Fatalf("status %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	cookies := res.Cookies()
	if len(cookies) != 1 || cookies[0].Value != sessionID+"."+state+"."+appID || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteLaxMode || cookies[0].Path != Path {
		t.Fatalf("cookies %+v", cookies)
	}
	if got := f.opened[0]; got.GetClientId() != appID || got.GetHash() != hash || got.GetState() != state || got.GetSessionId() != sessionID {
		t.Fatalf("billing was asked %+v", got)
	}
}

func TestPaymentPagesAnswerBillingsRefusalsAsPages(t *testing.T) {
	cases := []struct {
		err  error
		code int
		text string
	}{
		{status.Error(codes.NotFound, "x"), http.StatusBadRequest, "not valid"},
		{status.Error(codes.FailedPrecondition, "x"), http.StatusConflict, "already finished"},
		{status.Error(codes.Unavailable, "x"), http.StatusServiceUnavailable, "temporarily unavailable"},
		{status.Error(codes.Internal, "secret cause"), http.StatusInternalServerError, "on our side"},
	}
	for _, tc := range cases {
		for name, h := range map[string]func(*Pages) http.HandlerFunc{
			"open":   func(p *Pages) http.HandlerFunc { return p.Open },
			"return": func(p *Pages) http.HandlerFunc { return p.Return },
		} {
			f := &fakeBilling{openErr: tc.err, returnErr: tc.err}
			target := link(nil)
			if name == "return" {
				target = ReturnPath + "?session_id=" + sessionID
			}
			res := serve(h(New(f, f, slog.New(slog.DiscardHandler))), target)
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.code || !strings.Contains(string(body), tc.text) || strings.Contains(string(body), "secret cause") {
				t.Errorf("%s, %v: status %d: %s", name, status.Code(tc.err), res.StatusCode, body)
			}
		}
	}
}

func TestReturnPagePassesTheStateOnlyForItsOwnSession(t *testing.T) {
	for name, tc := range map[string]struct {
		cookie *http.Cookie
		want   string
	}{
		"the session's own cookie":             {&http.Cookie{Name: stateCookie, Value: sessionID + "." + state + "." + appID}, state},
		"a cookie set before it named the app": {&http.Cookie{Name: stateCookie, Value: sessionID + "." + state}, state},
		"a cookie with a malformed app":        {&http.Cookie{Name: stateCookie, Value: sessionID + "." + state + ".nope"}, ""},
		"another session's cookie":             {&http.Cookie{Name: stateCookie, Value: "11111111-2c63-4d0e-8a8e-9c0b1a2d3e4f." + state}, ""},
		"a malformed state":                    {&http.Cookie{Name: stateCookie, Value: sessionID + ".short"}, ""},
		"no cookie":                            {nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			f := &fakeBilling{redirectURL: "https://app.example/paid?session_id=" + sessionID}
			var cookies []*http.Cookie
			if tc.cookie != nil {
				cookies = append(cookies, tc.cookie)
			}
			res := serve(New(f, f, slog.New(slog.DiscardHandler)).Return, ReturnPath+"?session_id="+sessionID, cookies...)
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != f.redirectURL || f.returned[0].GetState() != tc.want {
				t.Fatalf("status %d to %q, billing asked with state %q", res.StatusCode, res.Header.Get("Location"), f.returned[0].GetState())
			}
			if c := res.Cookies(); len(c) != 1 || c[0].MaxAge >= 0 {
				t.Fatalf("the state cookie is not cleared: %+v", c)
			}
		})
	}
}

func TestReturnPageNeverRedirectsToARelativeURL(t *testing.T) {
	f := &fakeBilling{redirectURL: "/elsewhere"}
	res := serve(New(f, f, slog.New(slog.DiscardHandler)).Return, ReturnPath+"?session_id="+sessionID)
	if res.StatusCode != http.StatusInternalServerError || res.Header.Get("Location") != "" {
		t.Fatalf("status %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
}
