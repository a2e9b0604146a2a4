package porttest

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// listCases are the cases of the lists of routes 6, 7 and 9, run by Run with the others.
var listCases = []struct {
	name string
	run  func(t *testing.T, s app.Store)
}{
	{"SubscriptionsAreListedByTheirPaymentsInTheRangeLatestFirst", subscriptionsByPayments},
	{"ASubscriptionPaymentIsRecordedOncePerKey", subscriptionPaymentOnce},
	{"SubscriptionStateFollowsRevisionsAndTheEndSticks", subscriptionState},
	{"ConcurrentChangesOfOneSubscriptionKeepTheNewest", subscriptionConcurrent},
	{"ListedItemsCarryTheirPayersSnapshots", payersSnapshots},
	{"OneTimePaymentsAreListedWithinHalfOpenBoundsNewestFirst", oneTimeBounds},
	{"RecordingAOneTimePaymentAgainKeepsTheFirst", oneTimeOnce},
	{"TenantsAreListedByTheDaysTheyChanged", tenantsByDays},
	{"TenantItemsCarryTheirLiveUsersOrderedById", tenantUsers},
	{"ListsAreScopedToTheirApp", listsScopedToApp},
	{"AVisitStopsAtTheVisitorsError", visitStops},
	{"ResetEmptiesEveryReadModel", resetEmpties},
}

var day = 24 * time.Hour

// visited collects a visit: the count it was told and the records it received.
type visited[T any] struct {
	count int
	recs  []T
}

func collect[T any](t *testing.T, visit func(app.Visitor[T]) error) visited[T] {
	t.Helper()
	out := visited[T]{count: -1}
	err := visit(app.Visitor[T]{
		Count: func(n int) error {
			if out.count != -1 || len(out.recs) > 0 {
				return errors.New("count told twice or after records")
			}
			out.count = n
			return nil
		},
		Each: func(rec T) error { out.recs = append(out.recs, rec); return nil },
	})
	if err != nil {
		t.Fatalf("visit: %v", err)
	}
	if out.count != len(out.recs) {
		t.Fatalf("told %d records, received %d", out.count, len(out.recs))
	}
	return out
}

func subscriptions(t *testing.T, s app.Store, appID string, from, to time.Time) []app.SubscriptionRecord {
	t.Helper()
	return collect(t, func(v app.Visitor[app.SubscriptionRecord]) error {
		return s.VisitSubscriptions(ctx, appID, from, to, v)
	}).recs
}

func oneTimes(t *testing.T, s app.Store, appID string, from, to time.Time) []app.OneTimePaymentRecord {
	t.Helper()
	return collect(t, func(v app.Visitor[app.OneTimePaymentRecord]) error {
		return s.VisitOneTimePayments(ctx, appID, from, to, v)
	}).recs
}

func tenants(t *testing.T, s app.Store, appID string, from, to time.Time) []app.TenantRecord {
	t.Helper()
	return collect(t, func(v app.Visitor[app.TenantRecord]) error { return s.VisitTenants(ctx, appID, from, to, v) }).recs
}

// subChange is a change of subscription subID at revision rev, paid until until, with a payment
// keyed key at at when key is not empty.
func subChange(appID, tenantID, subID string, rev int64, until time.Time, key string, at time.Time) domain.SubscriptionChange {
	c := domain.SubscriptionChange{State: domain.Subscription{
		ID: domain.SubscriptionItemID(appID, subID), AppID: appID, SubscriptionID: subID, TenantID: tenantID,
		PriceID: fmt.Sprintf("price_%d", rev), CustomerID: "cus_1", Paid: true, Until: until, Revision: rev,
	}}
	if key != "" {
		c.Payment = &domain.SubscriptionPayment{Key: key, At: at}
	}
	return c
}

func applySub(t *testing.T, s app.Store, c domain.SubscriptionChange) {
	t.Helper()
	if err := s.ApplySubscription(ctx, c); err != nil {
		t.Fatalf("ApplySubscription: %v", err)
	}
}

func subIDs(recs []app.SubscriptionRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Subscription.SubscriptionID)
	}
	return out
}

func subscriptionsByPayments(t *testing.T, s app.Store) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	from, to := base, base.Add(5*day)
	applySub(t, s, subChange(appID, tenantID, "sub_a", 1, base, "inv_a1", from.Add(-day)))  // before the range
	applySub(t, s, subChange(appID, tenantID, "sub_a", 2, base, "inv_a2", from.Add(4*day))) // in it, latest
	applySub(t, s, subChange(appID, tenantID, "sub_b", 1, base, "inv_b1", from))            // at from: included
	applySub(t, s, subChange(appID, tenantID, "sub_c", 1, base, "inv_c1", to))              // at to: excluded
	applySub(t, s, subChange(appID, tenantID, "sub_d", 1, base, "", from.Add(day)))         // no payment: not listed
	applySub(t, s, subChange(appID, tenantID, "sub_e", 1, base, "inv_e1", to.Add(-time.Microsecond)))
	got := subIDs(subscriptions(t, s, appID, from, to))
	if want := []string{"sub_e", "sub_a", "sub_b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v, want %v (by latest payment in [from, to), newest first)", got, want)
	}
	if got := subIDs(subscriptions(t, s, appID, to.Add(day), to.Add(2*day))); len(got) != 0 {
		t.Fatalf("a range without payments listed %v", got)
	}
}

func subscriptionPaymentOnce(t *testing.T, s app.Store) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	applySub(t, s, subChange(appID, tenantID, "sub_a", 1, base, "inv_1", base))
	// The same payment again, recorded at another time (a redelivered event): it stays where it was.
	applySub(t, s, subChange(appID, tenantID, "sub_a", 1, base, "inv_1", base.Add(3*day)))
	if got := subscriptions(t, s, appID, base.Add(2*day), base.Add(4*day)); len(got) != 0 {
		t.Fatalf("a payment recorded again moved to its second time: %v", subIDs(got))
	}
	if got := subscriptions(t, s, appID, base, base.Add(day)); len(got) != 1 {
		t.Fatalf("listed %d items for one subscription, want 1", len(got))
	}
}

func subscriptionState(t *testing.T, s app.Store) {
	appID, tenantID, userID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	started := subChange(appID, tenantID, "sub_a", 2, base.Add(30*day), "cs_1", base)
	started.State.UserID, started.State.Test = userID, true
	applySub(t, s, started)
	failed := subChange(appID, tenantID, "sub_a", 3, base.Add(30*day), "", time.Time{})
	failed.State.Paid = false
	applySub(t, s, failed)
	applySub(t, s, subChange(appID, tenantID, "sub_a", 1, base, "", time.Time{})) // an older state, late
	ended := subChange(appID, tenantID, "sub_a", 4, base.Add(90*day), "", time.Time{})
	ended.Ended = true
	applySub(t, s, ended)
	applySub(t, s, subChange(appID, tenantID, "sub_a", 5, base.Add(99*day), "", time.Time{})) // the tenant's, after the end
	got := subscriptions(t, s, appID, base, base.Add(day))
	if len(got) != 1 {
		t.Fatalf("listed %d subscriptions, want 1", len(got))
	}
	want := domain.Subscription{
		ID: domain.SubscriptionItemID(appID, "sub_a"), AppID: appID, SubscriptionID: "sub_a", TenantID: tenantID, UserID: userID,
		PriceID: "price_3", CustomerID: "cus_1", Test: false, Paid: false, Cancelled: true, Until: base.Add(30 * day), Revision: 3, EndedRevision: 4,
	}
	if got[0].Subscription != want {
		t.Fatalf("stored\n %+v\nwant\n %+v", got[0].Subscription, want)
	}
}

func subscriptionConcurrent(t *testing.T, s app.Store) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for rev := int64(1); rev <= 8; rev++ {
		wg.Go(func() {
			errs <- s.ApplySubscription(ctx, subChange(appID, tenantID, "sub_a", rev, base.Add(time.Duration(rev)*day), fmt.Sprintf("inv_%d", rev), base))
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("ApplySubscription: %v", err)
		}
	}
	got := subscriptions(t, s, appID, base, base.Add(day))
	if len(got) != 1 || got[0].Subscription.Revision != 8 || got[0].Subscription.PriceID != "price_8" || !got[0].Subscription.Until.Equal(base.Add(8*day)) {
		t.Fatalf("after 8 concurrent changes stored %+v, want revision 8's state", got)
	}
}

func payersSnapshots(t *testing.T, s app.Store) {
	appID, tenantID, userID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, AsOf: base, User: fullUser(appID, userID, "Ada")})
	putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: base, Tenant: fullTenant(tenantID, "Acme")})
	paid := subChange(appID, tenantID, "sub_a", 1, base, "inv_1", base)
	paid.State.UserID = userID
	applySub(t, s, paid)
	applySub(t, s, subChange(appID, tenantID, "sub_b", 1, base, "inv_2", base.Add(time.Hour))) // started with an API key
	recordOneTime(t, s, oneTime(appID, tenantID, userID, base))
	subs := subscriptions(t, s, appID, base, base.Add(day))
	if len(subs) != 2 || subs[0].User != nil || subs[0].Tenant != nil {
		t.Fatalf("a subscription without a payer carries %+v", subs)
	}
	for _, p := range []app.Payer{subs[1].Payer, oneTimes(t, s, appID, base, base.Add(day))[0].Payer} {
		if p.User == nil || p.User.User.GetName() != "Ada" || p.User.TenantRef != tenantID || p.Tenant == nil || p.Tenant.Tenant.GetName() != "Acme" {
			t.Fatalf("payer %+v, want Ada's snapshot with Acme's", p)
		}
	}
}

func oneTime(appID, tenantID, userID string, at time.Time) domain.OneTimePayment {
	return domain.OneTimePayment{ID: uuid.NewString(), AppID: appID, TenantID: tenantID, UserID: userID, PaymentID: "cs_1",
		PriceID: "price_units", CustomerID: "cus_1", Test: true, Units: 5, UnitsBefore: 10, At: at}
}

func recordOneTime(t *testing.T, s app.Store, p domain.OneTimePayment) {
	t.Helper()
	if err := s.RecordOneTimePayment(ctx, p); err != nil {
		t.Fatalf("RecordOneTimePayment: %v", err)
	}
}

func oneTimeIDs(recs []app.OneTimePaymentRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Payment.ID)
	}
	return out
}

func oneTimeBounds(t *testing.T, s app.Store) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	from, to := base, base.Add(day)
	atFrom, last := oneTime(appID, tenantID, "", from), oneTime(appID, tenantID, "", to.Add(-time.Microsecond))
	for _, p := range []domain.OneTimePayment{oneTime(appID, tenantID, "", from.Add(-time.Microsecond)), atFrom, last, oneTime(appID, tenantID, "", to)} {
		recordOneTime(t, s, p)
	}
	recs := oneTimes(t, s, appID, from, to)
	if got, want := oneTimeIDs(recs), []string{last.ID, atFrom.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
	if recs[0].Payment != last {
		t.Fatalf("read back %+v, want %+v", recs[0].Payment, last)
	}
}

func oneTimeOnce(t *testing.T, s app.Store) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	first := oneTime(appID, tenantID, "", base)
	recordOneTime(t, s, first)
	again := first
	again.Units, again.At = 99, base.Add(time.Minute)
	recordOneTime(t, s, again)
	recs := oneTimes(t, s, appID, base.Add(-day), base.Add(day))
	if len(recs) != 1 || recs[0].Payment != first {
		t.Fatalf("listed %+v, want only the first recording", recs)
	}
}

func tenantIDs(recs []app.TenantRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Tenant.TenantID)
	}
	return out
}

func tenantsByDays(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	// Ranges are whole days: midnight UTC to midnight UTC.
	d0 := domain.Day(base)
	early, late, both := uuid.NewString(), uuid.NewString(), uuid.NewString()
	putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: early, AsOf: d0.Add(time.Hour), Tenant: fullTenant(early, "early")})
	putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: late, AsOf: d0.Add(2*day + 23*time.Hour), Tenant: fullTenant(late, "late")})
	putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: both, AsOf: d0.Add(5 * day), Tenant: fullTenant(both, "renamed")})
	// An older snapshot arriving late does not replace the newer one, but its day is a day it changed.
	putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: both, AsOf: d0.Add(day), Tenant: fullTenant(both, "first")})
	recs := tenants(t, s, appID, d0, d0.Add(3*day))
	if got, want := tenantIDs(recs), []string{late, both, early}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v, want %v (by latest change day in range, newest first)", got, want)
	}
	if name := recs[1].Tenant.Tenant.GetName(); name != "renamed" {
		t.Fatalf("tenant listed as %q, want its newest snapshot", name)
	}
	if got := tenantIDs(tenants(t, s, appID, d0.Add(3*day), d0.Add(5*day))); len(got) != 0 {
		t.Fatalf("days without changes listed %v", got)
	}
	if got := tenantIDs(tenants(t, s, appID, d0.Add(5*day), d0.Add(6*day))); !reflect.DeepEqual(got, []string{both}) {
		t.Fatalf("the last day listed %v, want %v", got, []string{both})
	}
}

func tenantUsers(t *testing.T, s app.Store) {
	appID, tenantID, otherTenant := uuid.NewString(), uuid.NewString(), uuid.NewString()
	a, b := "00000000-0000-7000-8000-00000000000a", "00000000-0000-7000-8000-00000000000b"
	gone, stranger := uuid.NewString(), uuid.NewString()
	putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: base, Tenant: fullTenant(tenantID, "Acme")})
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: b, TenantRef: tenantID, AsOf: base, User: fullUser(appID, b, "Bea")})
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: a, TenantRef: tenantID, AsOf: base, User: fullUser(appID, a, "Ada")})
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: gone, TenantRef: tenantID, AsOf: base, User: fullUser(appID, gone, "Gone")})
	markDeleted(t, s, appID, gone, tenantID, base.Add(time.Minute))
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: stranger, TenantRef: otherTenant, AsOf: base, User: fullUser(appID, stranger, "Cy")})
	recs := tenants(t, s, appID, domain.Day(base), domain.Day(base).Add(day))
	if len(recs) != 1 {
		t.Fatalf("listed %d tenants, want 1", len(recs))
	}
	var names []string
	for _, u := range recs[0].Users {
		names = append(names, u.User.GetName())
		if u.AppID != appID || u.TenantRef != tenantID || u.Deleted || !u.AsOf.Equal(base) {
			t.Fatalf("user snapshot %+v", u)
		}
	}
	if want := []string{"Ada", "Bea"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("users %v, want %v (live users of the tenant, by id)", names, want)
	}
}

func listsScopedToApp(t *testing.T, s app.Store) {
	appA, appB, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	applySub(t, s, subChange(appA, tenantID, "sub_a", 1, base, "inv_1", base))
	recordOneTime(t, s, oneTime(appA, tenantID, "", base))
	putTenant(t, s, app.TenantSnapshot{AppID: appA, TenantID: tenantID, AsOf: base, Tenant: fullTenant(tenantID, "Acme")})
	from, to := base.Add(-day), base.Add(day)
	if n := len(subscriptions(t, s, appB, from, to)) + len(oneTimes(t, s, appB, from, to)) + len(tenants(t, s, appB, from, to)); n != 0 {
		t.Fatalf("another app's lists hold %d records", n)
	}
	if n := len(subscriptions(t, s, appA, from, to)) + len(oneTimes(t, s, appA, from, to)) + len(tenants(t, s, appA, from, to)); n != 3 {
		t.Fatalf("the app's lists hold %d records, want 3", n)
	}
}

func visitStops(t *testing.T, s app.Store) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	for i := range 3 {
		recordOneTime(t, s, oneTime(appID, tenantID, "", base.Add(time.Duration(i)*time.Minute)))
	}
	stop := errors.New("client went away")
	seen := 0
	err := s.VisitOneTimePayments(ctx, appID, base, base.Add(day), app.Visitor[app.OneTimePaymentRecord]{
		Count: func(int) error { return nil },
		Each:  func(app.OneTimePaymentRecord) error { seen++; return stop },
	})
	if !errors.Is(err, stop) || seen != 1 {
		t.Fatalf("visit returned %v after %d records, want the visitor's error after 1", err, seen)
	}
	err = s.VisitTenants(ctx, appID, base, base.Add(day), app.Visitor[app.TenantRecord]{
		Count: func(int) error { return stop },
		Each:  func(app.TenantRecord) error { t.Fatal("visited a record after Count failed"); return nil },
	})
	if !errors.Is(err, stop) {
		t.Fatalf("visit returned %v, want Count's error", err)
	}
}

func resetEmpties(t *testing.T, s app.Store) {
	appID, tenantID, userID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	fill := func() {
		record(t, s, signIn(appID, userID, base))
		putUser(t, s, app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, AsOf: base, User: fullUser(appID, userID, "Ada")})
		putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: base, Tenant: fullTenant(tenantID, "Acme")})
		applySub(t, s, subChange(appID, tenantID, "sub_a", 1, base, "inv_1", base))
		recordOneTime(t, s, oneTime(appID, tenantID, userID, base))
	}
	counts := func() []int {
		from, to := base.Add(-day), base.Add(day)
		return []int{len(list(t, s, appID, from, to)), len(subscriptions(t, s, appID, from, to)), len(oneTimes(t, s, appID, from, to)), len(tenants(t, s, appID, from, to))}
	}
	fill()
	if err := s.Reset(ctx); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if got := counts(); !reflect.DeepEqual(got, []int{0, 0, 0, 0}) {
		t.Fatalf("after Reset the lists hold %v records", got)
	}
	// Snapshots went too: a sign-in recorded now has no user until an event brings one.
	record(t, s, signIn(appID, userID, base))
	if rec := only(t, s, appID); rec.User != nil {
		t.Fatalf("a snapshot survived Reset: %+v", rec.User)
	}
	fill()
	if got := counts(); !reflect.DeepEqual(got, []int{2, 1, 1, 1}) {
		t.Fatalf("after filling again the lists hold %v records, want [2 1 1 1]", got)
	}
}
