package contract

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

func TestDailySeriesShowsTodaysSignUpAndSignIn(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			series := e.seriesClient(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			week := func() *analyticsv1.DailySeries {
				t.Helper()
				s, err := series.GetDailySeries(ctx, &analyticsv1.GetDailySeriesRequest{AppId: e.demo.AppID, Days: 7})
				if err != nil {
					t.Fatalf("GetDailySeries: %v", err)
				}
				if len(s.GetRows()) != 7 || s.GetTo() != day(0) || s.GetFrom() != day(-6) || s.GetRows()[6].GetDay() != day(0) || s.GetAppId() != e.demo.AppID {
					t.Fatalf("series %s..%s of %s with %d rows, want the 7 days to today", s.GetFrom(), s.GetTo(), s.GetAppId(), len(s.GetRows()))
				}
				return s
			}
			before := week().GetRows()[6]

			// A sign-up through the identity API, then a sign-in on the hosted page.
			const email = "series-today@example.com"
			e.newUser(t, email)
			if _, res, _ := e.hostedSubmit(t, "signIn", email, "correct horse battery staple"); res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusFound {
				t.Fatalf("sign-in: %d", res.StatusCode)
			}
			var today *analyticsv1.DailyRow
			testkit.Eventually(t, "today's row counts the new user, their tenant and their sign-in", func() bool {
				today = week().GetRows()[6]
				return today.GetNewUsers() == before.GetNewUsers()+1 && today.GetNewTenants() == before.GetNewTenants()+1 &&
					today.GetSignIns() >= before.GetSignIns()+1 && today.GetActiveUsers() == before.GetActiveUsers()+1
			})

			// A one-time payment and a subscription paid today, checked out by the user's token: revenue
			// per currency and a running subscription.
			u := e.tokenUser(t, "series-payer@example.com")
			px := e.demo.Pspx
			for _, b := range []string{checkoutBody(px.Prices.OneTime, px.TaxRate, "payment", map[string]any{"quantity": 2}),
				checkoutBody(px.Prices.Monthly, px.TaxRate, "subscription", nil)} {
				_, payURL := e.createCheckout(t, bearer(u.access), u.tenant, e.demo.AppID, b)
				if got := e.pay(t, payURL, card("4242424242424242")).Query().Get("status"); got != "completed" {
					t.Fatalf("checkout: %s", got)
				}
			}
			e.settle(t, time.Minute)
			testkit.Eventually(t, "today's row counts the payments' revenue and the running subscription", func() bool {
				today = week().GetRows()[6]
				return today.GetActiveSubscriptions() == before.GetActiveSubscriptions()+1 &&
					revenue(today.GetOneTimeRevenue()) > revenue(before.GetOneTimeRevenue()) &&
					revenue(today.GetRecurringRevenue()) > revenue(before.GetRecurringRevenue())
			})
			for _, m := range append(today.GetOneTimeRevenue(), today.GetRecurringRevenue()...) {
				if len(m.GetCurrency()) != 3 || m.GetCurrency() != strings.ToUpper(m.GetCurrency()) {
					t.Fatalf("revenue in currency %q, want an upper-case ISO 4217 code", m.GetCurrency())
				}
			}

			// A rebuild from the stored events answers the same series.
			want := week()
			e.rebuildAnalytics(t)
			if got := week(); !proto.Equal(got, want) {
				t.Fatalf("after a rebuild\n%v\nbefore it\n%v", got, want)
			}

			// What the series refuses, and whom.
			for _, req := range []*analyticsv1.GetDailySeriesRequest{
				{AppId: e.demo.AppID, Days: 8},
				{AppId: e.demo.AppID, Days: 30, End: "2026-02-30"},
				{AppId: "not-an-app", Days: 7},
			} {
				if _, err := series.GetDailySeries(ctx, req); status.Code(err) != codes.InvalidArgument {
					t.Fatalf("GetDailySeries(%v) = %v, want InvalidArgument", req, err)
				}
			}
			bare, err := grpc.NewClient(e.stack.Addr("analytics"), grpcx.ClientOptions("", nil)...)
			if err != nil {
				t.Fatal(err)
			}
			defer bare.Close()
			anon := analyticsv1.NewAnalyticsSeriesServiceClient(bare)
			readKey := metadata.AppendToOutgoingContext(ctx, authn.MDAPIKey, e.demo.ReadKey, authn.MDAPIKeyType, "read", authn.MDClientID, e.demo.AppID)
			for name, c := range map[string]context.Context{"no credentials": ctx, "a read API key": readKey} {
				if _, err := anon.GetDailySeries(c, &analyticsv1.GetDailySeriesRequest{AppId: e.demo.AppID, Days: 7}); status.Code(err) != codes.Unauthenticated && status.Code(err) != codes.PermissionDenied {
					t.Fatalf("%s: %v, want refused", name, err)
				}
			}
		})
	}
}

// seriesClient is the daily series' client with the deployment's admin token.
func (e *env) seriesClient(t *testing.T) analyticsv1.AnalyticsSeriesServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(e.stack.Addr("analytics"), append(grpcx.ClientOptions("", nil), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(e.adminToken)))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return analyticsv1.NewAnalyticsSeriesServiceClient(conn)
}

// revenue sums a row's amounts over its currencies: the test's payments are all in one currency.
func revenue(ms []*analyticsv1.CurrencyAmount) int64 {
	var sum int64
	for _, m := range ms {
		sum += m.GetAmount()
	}
	return sum
}
