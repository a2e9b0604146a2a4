package app_test

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

var mailedCode = regexp.MustCompile(`\b[0-9]{6}\b`)

// pendingLink answers the provider's page as a person it vouches for with email, whose address
// has an account, and returns the sealed link the confirmation page posts back.
func pendingLink(t *testing.T, f *fixture, rig *idpRig, email string) string {
	t.Helper()
	out, err := f.svc.FinishProviderSignIn(context.Background(), rig.consent(t, person{email: email, verified: true}))
	if err != nil || out.Link == "" {
		t.Fatalf("the provider sign-in of an existing account = %+v, %v; want a link to confirm", out, err)
	}
	return out.Link
}

// sendLinkCode mails the code of link and returns the link bound to it and the mailed code.
func sendLinkCode(t *testing.T, f *fixture, link string) (string, string) {
	t.Helper()
	bound, err := f.svc.SendProviderLinkCode(context.Background(), link, clientIP)
	if err != nil {
		t.Fatalf("SendProviderLinkCode: %v", err)
	}
	code := mailedCode.FindString(f.mailer.last(t).Text)
	if code == "" {
		t.Fatalf("the mail has no code:\n%s", f.mailer.last(t).Text)
	}
	return bound, code
}

// wrongCode is a well-formed code other than code.
func wrongCode(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

// The proofs that link a provider identity to an existing account (docs/accounts.md): the
// account's password, its second factor, or a code mailed to its address; each wrong, expired or
// exhausted one links nothing. A second factor given here completes the sign-in; after the
// password or the mailed code the provider is the only factor and the tokens say so.
func TestALinkToAnExistingAccountNeedsOneProofThatTheAccountIsThePersons(t *testing.T) {
	const passwordless = "ada@example.test" // the fixture's user, provisioned without a password
	const withPassword = "grace@example.test"
	for _, tc := range []struct {
		name  string
		email string
		totp  bool
		// proof fills the confirmation of link (totp is the enrolled secret) and may return
		// another link to post (one bound to a mailed code).
		proof func(t *testing.T, f *fixture, link, totp string) (string, app.ConfirmLinkInput)
		// want is the refusal's field, or "provider:" and the reason, or "" for a link.
		want    string
		wantAMR []any
	}{
		{name: "the password", email: withPassword, wantAMR: []any{"pwd", "fed"},
			proof: func(_ *testing.T, _ *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				return link, app.ConfirmLinkInput{Password: goodPassword}
			}},
		{name: "a wrong password", email: withPassword, want: "",
			proof: func(_ *testing.T, _ *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				return link, app.ConfirmLinkInput{Password: "not the password"}
			}},
		{name: "the authenticator's code", email: withPassword, totp: true, wantAMR: []any{"fed", "otp", "mfa"},
			proof: func(t *testing.T, f *fixture, link, secret string) (string, app.ConfirmLinkInput) {
				return link, app.ConfirmLinkInput{Code: totpCode(t, secret, f.now)}
			}},
		{name: "a wrong authenticator code", email: withPassword, totp: true, want: "code",
			proof: func(t *testing.T, f *fixture, link, secret string) (string, app.ConfirmLinkInput) {
				return link, app.ConfirmLinkInput{Code: wrongCode(totpCode(t, secret, f.now))}
			}},
		{name: "an authenticator code of an account without one", email: withPassword, want: "code",
			proof: func(_ *testing.T, _ *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				return link, app.ConfirmLinkInput{Code: "123456"}
			}},
		{name: "the mailed code, without a password", email: passwordless, wantAMR: []any{"fed"},
			proof: func(t *testing.T, f *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				bound, code := sendLinkCode(t, f, link)
				return bound, app.ConfirmLinkInput{EmailCode: code}
			}},
		{name: "a wrong mailed code", email: passwordless, want: "emailCode",
			proof: func(t *testing.T, f *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				bound, code := sendLinkCode(t, f, link)
				return bound, app.ConfirmLinkInput{EmailCode: wrongCode(code)}
			}},
		{name: "a mailed code without one sent for the link", email: passwordless, want: "emailCode",
			proof: func(t *testing.T, f *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				_, code := sendLinkCode(t, f, link)
				return link, app.ConfirmLinkInput{EmailCode: code}
			}},
		{name: "a mailed code retired by a newer one", email: passwordless, want: "emailCode",
			proof: func(t *testing.T, f *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				first, code := sendLinkCode(t, f, link)
				sendLinkCode(t, f, link)
				return first, app.ConfirmLinkInput{EmailCode: code}
			}},
		{name: "the mailed code after its attempts are used up", email: passwordless, want: "emailCode",
			proof: func(t *testing.T, f *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				bound, code := sendLinkCode(t, f, link)
				for range domain.MaxCodeAttempts {
					_, err := f.svc.ConfirmProviderLink(context.Background(), app.ConfirmLinkInput{Link: bound, EmailCode: wrongCode(code), ClientIP: clientIP})
					wantInvalid(t, err, "emailCode")
				}
				return bound, app.ConfirmLinkInput{EmailCode: code}
			}},
		{name: "the mailed code after the link expired", email: passwordless, want: "provider:" + app.ProviderReasonLink,
			proof: func(t *testing.T, f *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				bound, code := sendLinkCode(t, f, link)
				f.now = f.now.Add(10 * time.Minute)
				return bound, app.ConfirmLinkInput{EmailCode: code}
			}},
		{name: "two proofs at once", email: withPassword, want: "proof",
			proof: func(t *testing.T, f *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				bound, code := sendLinkCode(t, f, link)
				return bound, app.ConfirmLinkInput{Password: goodPassword, EmailCode: code}
			}},
		{name: "no proof", email: withPassword, want: "proof",
			proof: func(_ *testing.T, _ *fixture, link, _ string) (string, app.ConfirmLinkInput) {
				return link, app.ConfirmLinkInput{}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, withProviders)
			rig := newIdpRig(t, f, nil)
			ctx := context.Background()
			var secret string
			switch {
			case tc.totp:
				secret, _ = f.enrolTOTP(t, tc.email)
			case tc.email == withPassword:
				f.signUp(t, tc.email)
			}
			u, err := f.store.GetUserByEmail(ctx, f.app.ID, tc.email)
			if err != nil {
				t.Fatal(err)
			}
			f.drain(t)
			link, in := tc.proof(t, f, pendingLink(t, f, rig, tc.email), secret)
			in.Link, in.ClientIP = link, clientIP
			out, err := f.svc.ConfirmProviderLink(ctx, in)
			links, _ := f.store.ListProviderLinks(ctx, f.app.ID, u.ID)
			if tc.wantAMR == nil {
				if len(tc.want) > 9 && tc.want[:9] == "provider:" {
					wantProviderRefusal(t, "the confirmation", err, tc.want[9:])
				} else {
					wantInvalid(t, err, tc.want)
				}
				if len(links) != 0 || slices.Contains(types(f.drain(t)), identityv1.EventUserProviderLinked) {
					t.Errorf("a refused proof linked %v", links)
				}
				return
			}
			code := landed(t, app.ProviderOutcome{URL: out.URL}, err)
			if len(links) != 1 || links[0].Slot != "idpA" {
				t.Errorf("links after the confirmation = %v", links)
			}
			if !slices.Contains(types(f.drain(t)), identityv1.EventUserProviderLinked) {
				t.Error("the link wrote no provider-linked event")
			}
			tok, err := f.svc.ExchangeToken(ctx, app.TokenRequest{ClientID: f.app.ID, GrantType: app.GrantAuthorizationCode, Code: code,
				RedirectURI: "https://app.test/cb", Service: "idpA"})
			if err != nil {
				t.Fatal(err)
			}
			if got := claimsOf(t, tok.AccessToken, 1)["amr"]; !slices.Equal(got.([]any), tc.wantAMR) {
				t.Errorf("amr = %v, want %v", got, tc.wantAMR)
			}
		})
	}
}

// An unverified provider address never reaches a confirmation, so no proof can link it; and the
// mailed codes of a pending link are limited like the verification mails' resends.
func TestAnUnverifiedProviderAddressNeverLinksAndLinkCodesAreLimited(t *testing.T) {
	f := newFixture(t, withProviders, func(c *app.Config) { c.Limits.ResendsPerEmail = 2 })
	rig := newIdpRig(t, f, nil)
	ctx := context.Background()
	_, err := f.svc.FinishProviderSignIn(ctx, rig.consent(t, person{email: "ada@example.test", verified: false}))
	wantProviderRefusal(t, "an unverified address of an account", err, app.ProviderReasonTaken)

	link := pendingLink(t, f, rig, "ada@example.test")
	sendLinkCode(t, f, link)
	sendLinkCode(t, f, link)
	sent := f.mailer.count()
	_, err = f.svc.SendProviderLinkCode(ctx, link, clientIP)
	wantKind(t, err, fault.KindExhausted)
	if f.mailer.count() != sent {
		t.Error("a refused request mailed a code")
	}
	if _, err := f.svc.SendProviderLinkCode(ctx, link+"x", clientIP); err == nil {
		t.Error("a tampered link got a code")
	}
}

// A link's confirmation page names the account's address and the proofs it offers: the
// password only when the account has one, the authenticator app once enrolled.
func TestTheLinkConfirmationOffersTheProofsTheAccountHas(t *testing.T) {
	f := newFixture(t, withProviders)
	rig := newIdpRig(t, f, nil)
	ctx := context.Background()
	p, err := f.svc.DescribeProviderLink(ctx, pendingLink(t, f, rig, "ada@example.test"))
	if err != nil || p.Email != "ada@example.test" || p.ProviderName != "Provider A" || p.Password || p.TOTP || p.Passkey.Options != "" || p.CodeSent {
		t.Errorf("the password-less account's page = %+v, %v; want the mailed code alone", p, err)
	}
	f.enrolTOTP(t, "grace@example.test")
	link, _ := sendLinkCode(t, f, pendingLink(t, f, rig, "grace@example.test"))
	p, err = f.svc.DescribeProviderLink(ctx, link)
	if err != nil || !p.Password || !p.TOTP || !p.CodeSent || p.Params.ClientID != f.app.ID {
		t.Errorf("the enrolled account's page = %+v, %v; want the password, the app and a code sent", p, err)
	}
}
