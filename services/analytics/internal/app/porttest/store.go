package porttest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/conformance"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// Factory returns a fresh, empty store and the events inbox its consumers record events in.
type Factory func(t *testing.T) (app.Store, events.Inbox)

// Exempt declares a case the adapter under test cannot honour, and why.
type Exempt = conformance.Exempt

// Run runs the app.Store conformance suite against stores made by newStore, skipping the cases
// exempt names.
func Run(t *testing.T, newStore Factory, exempt ...Exempt) {
	tests := []struct {
		name string
		run  func(t *testing.T, s app.Store)
	}{
		{"SignInsAreListedWithinHalfOpenBounds", listedWithinBounds},
		{"SignInsAreListedNewestFirst", newestFirst},
		{"RecordingASignInAgainKeepsTheFirst", recordTwiceKeepsFirst},
		{"SignInsAreScopedToTheirApp", scopedToApp},
		{"SignInCarriesCurrentUserAndTenantSnapshots", carriesSnapshots},
		{"UserWithoutSnapshotHasNoUser", userWithoutSnapshot},
		{"TenantIsAbsentWhenUserHasNoneOrItIsUnknown", tenantAbsent},
		{"OlderUserSnapshotDoesNotOverwriteNewer", olderUserIgnored},
		{"OlderTenantSnapshotDoesNotOverwriteNewer", olderTenantIgnored},
		{"DeletionKeepsDataAndSticks", deletionSticks},
		{"DeletionBeforeAnySnapshotIsATombstone", deletionTombstone},
		{"SnapshotsAreScopedToTheirApp", snapshotsScopedToApp},
		{"ReturnedSnapshotsAreCopies", returnedCopies},
	}
	s := conformance.New(t, exempt)
	for _, tc := range append(append(append(tests, listCases...), dailyCases...), auditCases...) {
		s.Run(tc.name, func(t *testing.T) {
			store, _ := newStore(t)
			tc.run(t, store)
		})
	}
	s.Run("EffectsCommitWithTheInboxRecord", func(t *testing.T) {
		store, inbox := newStore(t)
		effectsCommitWithTheInboxRecord(t, store, inbox)
	})
}

// base is cut to microseconds, the precision Postgres keeps, so read-backs compare equal.
var base = time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC)

var ctx = context.Background()

func signIn(appID, userID string, at time.Time) domain.SignIn {
	return domain.SignIn{ID: uuid.NewString(), AppID: appID, UserID: userID, At: at, IP: "203.0.113.7"}
}

func fullUser(appID, userID, name string) *identityv1.TenantUser {
	return &identityv1.TenantUser{
		Id: userID, AppId: appID, Language: "de", Salutation: "ms", SalutationOther: "x",
		AcceptedNewsletter: true, AcceptedNewsletterDate: "2026-01-02T03:04:05Z", LastAskedNewsletterSignUp: "2026-01-01T00:00:00Z",
		NewsletterMemberId: "nl-" + name, Name: name, GivenName: "Ada", FamilyName: "Lovelace", MiddleName: "K",
		Nickname: "ada", PreferredUsername: "ada_l", Profile: "https://p.example", Picture: "https://i.example/a.png",
		Website: "https://w.example", Email: "ada@example.com", EmailVerified: true, Gender: "female", OtherGender: "",
		Birthdate: "1815-12-10", Zoneinfo: "Europe/London", Locale: "en-GB", PhoneNumber: "+441234", PhoneNumberVerified: true,
		Freezed: true, VerifiedByAdmin: true, IdpAEmailVerified: true, LastSignInAt: true, LastSignInIp: true, TenantId: true,
	}
}

func fullTenant(tenantID, name string) *tenantv1.Tenant {
	return &tenantv1.Tenant{
		Kind: "tenant", Id: tenantID, Name: name, PspxCustomerId: "cus_1", PspxPriceId: "price_1", PspxProductId: "prod_1",
		PspxSubscriptionId: "sub_1", PspxTrialingPriceId: "tp", PspxTrialingProductId: "tpr", PspxTrialingSubscriptionId: "ts",
		PspxCheckoutSessionId: "cs", PspxDefaultPaymentMethodId: "pm", PspxSubscriptionCancelAtPeriodEnd: true,
		PspxSubscriptionCancelAt: "2026-09-01T00:00:00Z", PspxPaymentMethod: "card", Mode: "subscription", Description: "d",
		PspxOneTimePaymentValidThru: "2026-12-31", FreezedDueFailedPayment: true, PaidUntil: "2026-09-01", FreeUntil: "2026-04-01",
		PaidUnits: "10", FreeUnits: "3", CompanyName: "Acme GmbH", CompanyVATId: "DE1", CompanyTaxType: "eu_vat",
		CompanyTaxExempt: "none", IsBusinessCustomer: true, IsInvoicePending: true, Freezed: true, PaymentFailed: true,
		PaymentFailedCount: 2, PaymentFailedDate: "2026-02-01", Deleted: false,
	}
}

func record(t *testing.T, s app.Store, in domain.SignIn) {
	t.Helper()
	if err := s.RecordSignIn(ctx, in); err != nil {
		t.Fatalf("RecordSignIn: %v", err)
	}
}

func putUser(t *testing.T, s app.Store, u app.UserSnapshot) {
	t.Helper()
	if err := s.PutUser(ctx, u); err != nil {
		t.Fatalf("PutUser: %v", err)
	}
}

func putTenant(t *testing.T, s app.Store, tn app.TenantSnapshot) {
	t.Helper()
	if err := s.PutTenant(ctx, tn); err != nil {
		t.Fatalf("PutTenant: %v", err)
	}
}

func markDeleted(t *testing.T, s app.Store, appID, userID, tenantRef string, at time.Time) {
	t.Helper()
	if err := s.MarkUserDeleted(ctx, appID, userID, tenantRef, at); err != nil {
		t.Fatalf("MarkUserDeleted: %v", err)
	}
}

func list(t *testing.T, s app.Store, appID string, from, to time.Time) []app.SignInRecord {
	t.Helper()
	recs, err := s.ListSignIns(ctx, appID, from, to)
	if err != nil {
		t.Fatalf("ListSignIns: %v", err)
	}
	return recs
}

// only lists every sign-in of the app around base and requires exactly one.
func only(t *testing.T, s app.Store, appID string) app.SignInRecord {
	t.Helper()
	recs := list(t, s, appID, base.Add(-1000*time.Hour), base.Add(1000*time.Hour))
	if len(recs) != 1 {
		t.Fatalf("listed %d sign-ins, want 1: %+v", len(recs), recs)
	}
	return recs[0]
}

func ids(recs []app.SignInRecord) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.SignIn.ID)
	}
	return out
}

func listedWithinBounds(t *testing.T, s app.Store) {
	appID, userID := uuid.NewString(), uuid.NewString()
	from, to := base, base.Add(24*time.Hour)
	atFrom := signIn(appID, userID, from)
	beforeFrom := signIn(appID, userID, from.Add(-time.Microsecond))
	lastInstant := signIn(appID, userID, to.Add(-time.Microsecond))
	atTo := signIn(appID, userID, to)
	for _, in := range []domain.SignIn{atFrom, beforeFrom, lastInstant, atTo} {
		record(t, s, in)
	}
	got := ids(list(t, s, appID, from, to))
	if want := []string{lastInstant.ID, atFrom.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v, want %v (from inclusive, to exclusive)", got, want)
	}
}

func newestFirst(t *testing.T, s app.Store) {
	appID, userID := uuid.NewString(), uuid.NewString()
	early, late := signIn(appID, userID, base), signIn(appID, userID, base.Add(time.Hour))
	// Two sign-ins at the same instant are ordered by id, descending, so pages are stable.
	tieA, tieB := signIn(appID, userID, base.Add(time.Minute)), signIn(appID, userID, base.Add(time.Minute))
	tieA.ID, tieB.ID = "00000000-0000-7000-8000-00000000000a", "00000000-0000-7000-8000-00000000000b"
	for _, in := range []domain.SignIn{early, tieA, late, tieB} {
		record(t, s, in)
	}
	got := ids(list(t, s, appID, base, base.Add(24*time.Hour)))
	if want := []string{late.ID, tieB.ID, tieA.ID, early.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
}

func recordTwiceKeepsFirst(t *testing.T, s app.Store) {
	appID, userID := uuid.NewString(), uuid.NewString()
	first := signIn(appID, userID, base)
	record(t, s, first)
	again := first
	again.IP, again.At = "198.51.100.1", base.Add(time.Minute)
	record(t, s, again)
	got := only(t, s, appID).SignIn
	if !reflect.DeepEqual(got, first) {
		t.Fatalf("stored %+v, want the first recording %+v", got, first)
	}
}

func scopedToApp(t *testing.T, s app.Store) {
	appA, appB, userID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	a := signIn(appA, userID, base)
	record(t, s, a)
	record(t, s, signIn(appB, userID, base))
	if got := ids(list(t, s, appA, base, base.Add(time.Hour))); !reflect.DeepEqual(got, []string{a.ID}) {
		t.Fatalf("app A listed %v, want only %s", got, a.ID)
	}
	if got := list(t, s, uuid.NewString(), base, base.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("an app without sign-ins listed %v", ids(got))
	}
}

func carriesSnapshots(t *testing.T, s app.Store) {
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	in := signIn(appID, userID, base)
	in.TenantRef = tenantID
	record(t, s, in)
	user := app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, AsOf: base, User: fullUser(appID, userID, "Ada")}
	putUser(t, s, user)
	tenant := app.TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: base, Tenant: fullTenant(tenantID, "Acme")}
	putTenant(t, s, tenant)

	got := only(t, s, appID)
	if !reflect.DeepEqual(got.SignIn, in) {
		t.Fatalf("sign-in %+v, want %+v", got.SignIn, in)
	}
	assertUser(t, got.User, user)
	assertTenant(t, got.Tenant, tenant)

	// A later snapshot replaces the one a sign-in shows: items show the user as it is now.
	moved := uuid.NewString()
	newer := app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: moved, AsOf: base.Add(time.Second), User: fullUser(appID, userID, "Ada B")}
	putUser(t, s, newer)
	movedTenant := app.TenantSnapshot{AppID: appID, TenantID: moved, AsOf: base, Tenant: fullTenant(moved, "Other")}
	putTenant(t, s, movedTenant)
	got = only(t, s, appID)
	assertUser(t, got.User, newer)
	assertTenant(t, got.Tenant, movedTenant)
	if got.SignIn.TenantRef != tenantID {
		t.Fatalf("the sign-in's own tenant reference changed to %q", got.SignIn.TenantRef)
	}
}

func userWithoutSnapshot(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	record(t, s, signIn(appID, uuid.NewString(), base))
	if got := only(t, s, appID); got.User != nil || got.Tenant != nil {
		t.Fatalf("user %+v tenant %+v, want none", got.User, got.Tenant)
	}
}

func tenantAbsent(t *testing.T, s app.Store) {
	appID, noTenant, unknownTenant := uuid.NewString(), uuid.NewString(), uuid.NewString()
	record(t, s, signIn(appID, noTenant, base))
	record(t, s, signIn(appID, unknownTenant, base.Add(time.Second)))
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: noTenant, AsOf: base, User: fullUser(appID, noTenant, "a")})
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: unknownTenant, TenantRef: uuid.NewString(), AsOf: base, User: fullUser(appID, unknownTenant, "b")})
	for _, rec := range list(t, s, appID, base, base.Add(time.Hour)) {
		if rec.User == nil {
			t.Fatalf("sign-in of %s lost its user", rec.SignIn.UserID)
		}
		if rec.Tenant != nil {
			t.Fatalf("sign-in of %s has tenant %+v, want none", rec.SignIn.UserID, rec.Tenant)
		}
	}
}

func olderUserIgnored(t *testing.T, s app.Store) {
	appID, userID := uuid.NewString(), uuid.NewString()
	record(t, s, signIn(appID, userID, base))
	newer := app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: uuid.NewString(), AsOf: base.Add(time.Minute), User: fullUser(appID, userID, "new")}
	putUser(t, s, newer)
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: userID, AsOf: base, User: fullUser(appID, userID, "old")})
	assertUser(t, only(t, s, appID).User, newer)

	// A snapshot as new as the stored one replaces it (same event time, later arrival).
	same := newer
	same.User = fullUser(appID, userID, "same time")
	putUser(t, s, same)
	assertUser(t, only(t, s, appID).User, same)
}

func olderTenantIgnored(t *testing.T, s app.Store) {
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	record(t, s, signIn(appID, userID, base))
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, AsOf: base, User: fullUser(appID, userID, "u")})
	newer := app.TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: base.Add(time.Minute), Tenant: fullTenant(tenantID, "new")}
	putTenant(t, s, newer)
	putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: base, Tenant: fullTenant(tenantID, "old")})
	assertTenant(t, only(t, s, appID).Tenant, newer)
}

func deletionSticks(t *testing.T, s app.Store) {
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	record(t, s, signIn(appID, userID, base))
	user := app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, AsOf: base, User: fullUser(appID, userID, "u")}
	putUser(t, s, user)
	markDeleted(t, s, appID, userID, "", base.Add(time.Minute))

	want := user
	want.Deleted, want.AsOf = true, base.Add(time.Minute)
	assertUser(t, only(t, s, appID).User, want)

	// Deleting again with an older time moves nothing back.
	markDeleted(t, s, appID, userID, "", base)
	assertUser(t, only(t, s, appID).User, want)

	// A newer snapshot updates the data but cannot undo the deletion.
	later := app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, AsOf: base.Add(time.Hour), User: fullUser(appID, userID, "later")}
	putUser(t, s, later)
	want = later
	want.Deleted = true
	assertUser(t, only(t, s, appID).User, want)
}

func deletionTombstone(t *testing.T, s app.Store) {
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	record(t, s, signIn(appID, userID, base))
	markDeleted(t, s, appID, userID, tenantID, base.Add(time.Minute))
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: userID, AsOf: base, User: fullUser(appID, userID, "older")})
	want := app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, Deleted: true, AsOf: base.Add(time.Minute)}
	assertUser(t, only(t, s, appID).User, want)
}

func snapshotsScopedToApp(t *testing.T, s app.Store) {
	appA, appB, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	record(t, s, signIn(appA, userID, base))
	// The same ids under another app must not show up in app A's items.
	putUser(t, s, app.UserSnapshot{AppID: appB, UserID: userID, TenantRef: tenantID, AsOf: base, User: fullUser(appB, userID, "b")})
	putTenant(t, s, app.TenantSnapshot{AppID: appB, TenantID: tenantID, AsOf: base, Tenant: fullTenant(tenantID, "b")})
	if got := only(t, s, appA); got.User != nil || got.Tenant != nil {
		t.Fatalf("app A's sign-in shows app B's snapshots: user %+v tenant %+v", got.User, got.Tenant)
	}
	putUser(t, s, app.UserSnapshot{AppID: appA, UserID: userID, TenantRef: tenantID, AsOf: base, User: fullUser(appA, userID, "a")})
	if got := only(t, s, appA); got.User == nil || got.Tenant != nil {
		t.Fatalf("app A's user %+v must not join app B's tenant %+v", got.User, got.Tenant)
	}
}

func returnedCopies(t *testing.T, s app.Store) {
	appID, userID, tenantID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	record(t, s, signIn(appID, userID, base))
	user := fullUser(appID, userID, "kept")
	putUser(t, s, app.UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantID, AsOf: base, User: user})
	putTenant(t, s, app.TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: base, Tenant: fullTenant(tenantID, "kept")})
	user.Name = "changed by the caller after PutUser"
	got := only(t, s, appID)
	got.User.User.Name = "changed by the reader"
	got.Tenant.Tenant.Name = "changed by the reader"
	again := only(t, s, appID)
	if again.User.User.GetName() != "kept" || again.Tenant.Tenant.GetName() != "kept" {
		t.Fatalf("stored snapshots changed through shared messages: user %q tenant %q",
			again.User.User.GetName(), again.Tenant.Tenant.GetName())
	}
}

func assertUser(t *testing.T, got *app.UserSnapshot, want app.UserSnapshot) {
	t.Helper()
	if got == nil {
		t.Fatalf("no user snapshot, want %s", describeUser(want))
	}
	if got.AppID != want.AppID || got.UserID != want.UserID || got.TenantRef != want.TenantRef ||
		got.Deleted != want.Deleted || !got.AsOf.Equal(want.AsOf) || !proto.Equal(got.User, want.User) {
		t.Fatalf("user snapshot %s, want %s", describeUser(*got), describeUser(want))
	}
}

func assertTenant(t *testing.T, got *app.TenantSnapshot, want app.TenantSnapshot) {
	t.Helper()
	if got == nil {
		t.Fatalf("no tenant snapshot, want %v", want.Tenant)
	}
	if got.AppID != want.AppID || got.TenantID != want.TenantID || !got.AsOf.Equal(want.AsOf) || !proto.Equal(got.Tenant, want.Tenant) {
		t.Fatalf("tenant snapshot %+v (%v), want %+v (%v)", *got, got.Tenant, want, want.Tenant)
	}
}

func describeUser(u app.UserSnapshot) string {
	return fmt.Sprintf("{app %s user %s tenant %q deleted %v asOf %v data %v}", u.AppID, u.UserID, u.TenantRef, u.Deleted, u.AsOf, u.User)
}
