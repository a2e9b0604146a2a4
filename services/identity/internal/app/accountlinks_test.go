package app_test

import (
	"context"
	"net/url"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// providerUser signs a new user up through the rig's provider as email and returns the user and
// its access token: a user without a password, linked in idpA.
func (r *idpRig) providerUser(t *testing.T, email string) (domain.User, string) {
	t.Helper()
	code := signedIn(t, r.f, r.consent(t, person{email: email, verified: true}))
	tok, err := r.f.svc.ExchangeToken(context.Background(), app.TokenRequest{ClientID: r.f.app.ID, GrantType: app.GrantAuthorizationCode,
		Code: code, RedirectURI: "https://app.test/cb", Service: "idpA", Nonce: "app-nonce"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := r.f.store.GetUserByEmail(context.Background(), r.f.app.ID, email)
	if err != nil {
		t.Fatal(err)
	}
	return u, tok.AccessToken
}

// linkFromAccount runs a link from the account page of token's user through the provider as p
// and returns the account page's notice the callback lands on.
func (r *idpRig) linkFromAccount(t *testing.T, token string, p person) string {
	t.Helper()
	start, err := r.f.svc.StartProviderLink(context.Background(), token, "idpA", "de")
	if err != nil {
		t.Fatalf("StartProviderLink: %v", err)
	}
	out, err := r.f.svc.FinishProviderSignIn(context.Background(), r.answer(t, start, p))
	if err != nil {
		t.Fatalf("the link's callback: %v", err)
	}
	u, err := url.Parse(out.URL)
	if err != nil || u.Scheme+"://"+u.Host+u.Path != "https://berth.test"+app.AccountPath {
		t.Fatalf("the link's callback lands on %+v, want the account page", out)
	}
	if q := u.Query(); q.Get("client_id") != r.f.app.ID || q.Get("language") != "de" {
		t.Errorf("account page query = %v, want the app and the page's language", q)
	}
	return u.Query().Get("notice")
}

func wantReason(t *testing.T, what string, err error, kind fault.Kind, reason string) {
	t.Helper()
	if f, ok := fault.As(err); !ok || f.Kind() != kind || f.Reason() != reason {
		t.Errorf("%s: error = %v, want %v with reason %q", what, err, kind, reason)
	}
}

// A signed-in user links a provider identity from the account page whatever address the provider
// names (verified or not, another than the account's): being signed in and consenting at the
// provider proves both sides. An identity linked to another user is never moved.
func TestLinkingFromTheAccountPageLinksTheSignedInUserAndNeverMovesAnotherUsersIdentity(t *testing.T) {
	for _, tc := range []struct {
		name        string
		other       bool // the provider identity signs in another user already
		verified    bool
		wantNotice  string
		wantLinkTo  string // "me", "other"
		wantFlagSet bool
	}{
		{name: "unverified address of the provider", wantNotice: app.NoticeLinked, wantLinkTo: "me"},
		{name: "verified address of the provider", verified: true, wantNotice: app.NoticeLinked, wantLinkTo: "me", wantFlagSet: true},
		{name: "identity of another user", other: true, verified: true, wantNotice: app.NoticeLinkTaken, wantLinkTo: "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, withProviders)
			ctx := context.Background()
			rig := newIdpRig(t, f, nil)
			providerEmail := "someone.else@idp.test"
			var other domain.User
			if tc.other {
				other, _ = rig.providerUser(t, providerEmail)
			}
			tok, me := f.session(t, "grace@example.test")
			f.drain(t)

			notice := rig.linkFromAccount(t, tok.AccessToken, person{email: providerEmail, verified: tc.verified})
			if notice != tc.wantNotice {
				t.Errorf("notice = %q, want %q", notice, tc.wantNotice)
			}
			mine, _ := f.store.ListProviderLinks(ctx, f.app.ID, me.ID)
			theirs, _ := f.store.ListProviderLinks(ctx, f.app.ID, other.ID)
			evs := types(f.drain(t))
			switch tc.wantLinkTo {
			case "me":
				if len(mine) != 1 || mine[0].Email != providerEmail {
					t.Errorf("my links = %v, want the provider identity with its address", mine)
				}
				if !slices.Contains(evs, identityv1.EventUserProviderLinked) {
					t.Errorf("events = %v, want provider_linked", evs)
				}
				// The provider alone now signs the account in.
				signedIn(t, f, rig.consent(t, person{email: providerEmail, verified: tc.verified}))
				_, err := f.svc.StartProviderLink(ctx, tok.AccessToken, "idpA", "")
				wantReason(t, "a second link in the slot", err, fault.KindInvalid, "linked")
			case "other":
				if len(mine) != 0 || len(theirs) != 1 {
					t.Errorf("links: mine %v, theirs %v; want the identity left with its user", mine, theirs)
				}
				if slices.Contains(evs, identityv1.EventUserProviderLinked) {
					t.Errorf("a refused link wrote %v", evs)
				}
			}
			if u, _ := f.store.GetUser(ctx, f.app.ID, me.ID); u.IdpAEmailVerified != tc.wantFlagSet {
				t.Errorf("idpA_email_verified = %v, want %v", u.IdpAEmailVerified, tc.wantFlagSet)
			}
		})
	}
}

func TestALinkStartIsRefusedForABadTokenSlotOrLanguage(t *testing.T) {
	f := newFixture(t, withProviders)
	newIdpRig(t, f, nil)
	ctx := context.Background()
	tok, _ := f.session(t, "grace@example.test")
	_, err := f.svc.StartProviderLink(ctx, "not.a.token", "idpA", "")
	wantStatus(t, "a forged token", err, codes.Unauthenticated)
	_, err = f.svc.StartProviderLink(ctx, tok.AccessToken, "idpB", "")
	wantProviderRefusal(t, "an empty slot", err, app.ProviderReasonSlot)
	_, err = f.svc.StartProviderLink(ctx, tok.AccessToken, "idpX", "")
	wantInvalid(t, err, "slot")
	_, err = f.svc.StartProviderLink(ctx, tok.AccessToken, "idpA", "xx-\x01")
	wantInvalid(t, err, "language")
}

// Unlinking asks a user with a password for it, never removes the last way to sign in, writes
// identity.user.provider_unlinked and makes the slot's idpX_email_verified false.
func TestUnlinkingKeepsTheLastWayToSignIn(t *testing.T) {
	for _, tc := range []struct {
		name          string
		password      bool // the user signed up with a password (else through the provider)
		otherLink     bool
		passkey       bool // a confirmed passkey
		passkeySignIn bool // the app lets passkeys sign in
		current       string
		want          string // "" unlinked, else the refusal: "current_password", "last_way"
	}{
		{name: "password user, right password", password: true, current: goodPassword},
		{name: "password user, wrong password", password: true, current: "not it", want: "current_password"},
		{name: "provider user, only link", want: "last_way"},
		{name: "provider user, another link", otherLink: true},
		{name: "provider user, passkey, app allows passkey sign-in", passkey: true, passkeySignIn: true},
		{name: "provider user, passkey, app does not allow passkey sign-in", passkey: true, want: "last_way"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, withProviders)
			ctx := context.Background()
			rig := newIdpRig(t, f, nil)
			var u domain.User
			var token string
			if tc.password {
				tok, me := f.session(t, "grace@example.test")
				u, token = me, tok.AccessToken
				if n := rig.linkFromAccount(t, token, person{email: "g@idp.test", verified: true}); n != app.NoticeLinked {
					t.Fatalf("link notice %q", n)
				}
			} else {
				u, token = rig.providerUser(t, "grace@example.test")
			}
			if tc.otherLink {
				l, _ := domain.NewProviderLink(f.app.ID, "idpB", "sub-b", u.ID, "", f.now)
				if err := f.store.CreateProviderLink(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			if tc.passkey {
				k := domain.Factor{ID: "9a0e3f5c-0b7f-4a43-9d4c-6f1d7f0b5a11", AppID: f.app.ID, UserID: u.ID, Kind: domain.FactorPasskey, SealedSecret: []byte{1}, CreatedAt: f.now}
				if err := f.store.SavePendingFactor(ctx, k); err != nil {
					t.Fatal(err)
				}
				if err := f.store.ConfirmFactor(ctx, f.app.ID, u.ID, k.ID, 0, f.now, nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.svc.SetAppPasskeySignIn(ctx, f.app.ID, tc.passkeySignIn); err != nil {
				t.Fatal(err)
			}
			f.drain(t)

			err := f.svc.UnlinkProvider(ctx, app.UnlinkInput{AccessToken: token, Slot: "idpA", Current: tc.current, ClientIP: clientIP})
			links, _ := f.store.ListProviderLinks(ctx, f.app.ID, u.ID)
			still := slices.ContainsFunc(links, func(l domain.ProviderLink) bool { return l.Slot == "idpA" })
			after, _ := f.store.GetUser(ctx, f.app.ID, u.ID)
			evs := types(f.drain(t))
			switch tc.want {
			case "":
				if err != nil {
					t.Fatalf("unlink: %v", err)
				}
				if still || after.IdpAEmailVerified {
					t.Errorf("after the unlink: links %v, idpA_email_verified %v; want neither", links, after.IdpAEmailVerified)
				}
				if !slices.Contains(evs, identityv1.EventUserProviderUnlinked) || !slices.Contains(evs, identityv1.EventUserUpdated) {
					t.Errorf("events = %v, want provider_unlinked and user.updated", evs)
				}
			case "current_password":
				wantInvalid(t, err, "current_password")
			default:
				wantReason(t, "unlink", err, fault.KindInvalid, tc.want)
			}
			if tc.want != "" && (!still || !after.IdpAEmailVerified || len(evs) != 0) {
				t.Errorf("a refused unlink changed something: link kept %v, flag %v, events %v", still, after.IdpAEmailVerified, evs)
			}
		})
	}
}

func TestUnlinkingASlotWithoutALinkIsNotFound(t *testing.T) {
	f := newFixture(t, withProviders)
	tok, _ := f.session(t, "grace@example.test")
	err := f.svc.UnlinkProvider(context.Background(), app.UnlinkInput{AccessToken: tok.AccessToken, Slot: "idpC", Current: goodPassword, ClientIP: clientIP})
	wantNotFound(t, err)
	err = f.svc.UnlinkProvider(context.Background(), app.UnlinkInput{AccessToken: tok.AccessToken, Slot: "nope", Current: goodPassword, ClientIP: clientIP})
	wantInvalid(t, err, "slot")
}

// A user removes one factor with the current password; under the required policy the last one
// stays; the last factor takes the recovery codes; the owner is mailed.
func TestRemovingOwnSecondFactors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		policy  string
		passkey bool // the user has a passkey besides the authenticator app
		current string
		want    string // "" removed, else "current_password" or the reason
	}{
		{name: "optional, last factor", policy: "optional", current: goodPassword},
		{name: "required, last factor", policy: "required", current: goodPassword, want: "required"},
		{name: "required, a passkey stays", policy: "required", passkey: true, current: goodPassword},
		{name: "wrong password", policy: "optional", current: "not it", want: "current_password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			tok, u := f.session(t, "grace@example.test")
			key, err := f.svc.StartTOTPEnrolment(ctx, tok.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.ConfirmTOTPEnrolment(ctx, tok.AccessToken, totpCode(t, key.Secret(), f.now), goodPassword, clientIP); err != nil {
				t.Fatal(err)
			}
			if tc.passkey {
				k := domain.Factor{ID: "9a0e3f5c-0b7f-4a43-9d4c-6f1d7f0b5a11", AppID: f.app.ID, UserID: u.ID, Kind: domain.FactorPasskey, SealedSecret: []byte{1}, CreatedAt: f.now}
				if err := f.store.SavePendingFactor(ctx, k); err != nil {
					t.Fatal(err)
				}
				if err := f.store.ConfirmFactor(ctx, f.app.ID, u.ID, k.ID, 0, f.now, nil); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.svc.SetAppMFA(ctx, f.app.ID, tc.policy); err != nil {
				t.Fatal(err)
			}
			f.drain(t)
			mails := f.mailer.count()

			err = f.svc.RemoveSecondFactor(ctx, app.RemoveFactorInput{AccessToken: tok.AccessToken, Kind: "totp", Current: tc.current, ClientIP: clientIP})
			st, _ := f.svc.DescribeSecondFactors(ctx, tok.AccessToken)
			evs := f.drain(t)
			switch tc.want {
			case "":
				if err != nil {
					t.Fatalf("removal: %v", err)
				}
				wantCodes := 0
				if tc.passkey {
					wantCodes = 10
				}
				if st.TOTP || st.RecoveryCodesLeft != wantCodes {
					t.Errorf("after the removal = %+v, want no authenticator and %d recovery codes", st, wantCodes)
				}
				if len(evs) != 1 || evs[0].Type != identityv1.EventSecondFactorRemoved {
					t.Fatalf("events = %v, want second_factor.removed", types(evs))
				}
				var p identityv1.SecondFactorChanged
				if err := evs[0].Decode(&p); err != nil || p.GetBy() != app.RemovedByUser || !slices.Equal(p.GetKinds(), []string{"totp"}) {
					t.Errorf("removed event = %+v, %v; want by user, kinds [totp]", &p, err)
				}
				if f.mailer.count() != mails+1 {
					t.Error("the owner was not mailed about the removal")
				}
			case "current_password":
				wantInvalid(t, err, "current_password")
			default:
				wantReason(t, "removal", err, fault.KindInvalid, tc.want)
			}
			if tc.want != "" && (!st.TOTP || len(evs) != 0) {
				t.Errorf("a refused removal changed something: %+v, events %v", st, types(evs))
			}
		})
	}
}

func TestRemovingAPasskeyNeedsItsIdAndAnUnknownFactorIsNotFound(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tok, u := f.session(t, "grace@example.test")
	k := domain.Factor{ID: "9a0e3f5c-0b7f-4a43-9d4c-6f1d7f0b5a11", AppID: f.app.ID, UserID: u.ID, Kind: domain.FactorPasskey, SealedSecret: []byte{1}, CreatedAt: f.now}
	if err := f.store.SavePendingFactor(ctx, k); err != nil {
		t.Fatal(err)
	}
	if err := f.store.ConfirmFactor(ctx, f.app.ID, u.ID, k.ID, 0, f.now, nil); err != nil {
		t.Fatal(err)
	}
	remove := func(kind, id string) error {
		return f.svc.RemoveSecondFactor(ctx, app.RemoveFactorInput{AccessToken: tok.AccessToken, Kind: kind, FactorID: id, Current: goodPassword, ClientIP: clientIP})
	}
	wantInvalid(t, remove("sms", ""), "kind")
	wantNotFound(t, remove("passkey", "5d1c2b8e-3a1f-4c6e-8f0a-1b2c3d4e5f60"))
	wantNotFound(t, remove("totp", ""))
	if err := remove("passkey", k.ID); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.svc.DescribeSignInMethods(ctx, tok.AccessToken); len(m.Passkeys) != 0 || !m.HasPassword {
		t.Errorf("sign-in methods after the removal = %+v", m)
	}
}
