package app_test

import (
	"context"
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/authn"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

func TestVerifyAccessToken(t *testing.T) {
	ctx := context.Background()
	grace := func(f *fixture) domain.User {
		u, _ := f.svc.GetUser(ctx, f.app.ID, "grace@example.test")
		return u
	}
	cases := []struct {
		name string
		prep func(t *testing.T, f *fixture, tok app.Tokens) string
		want codes.Code
	}{
		{"valid", func(_ *testing.T, _ *fixture, tok app.Tokens) string { return tok.AccessToken }, codes.OK},
		{"within the leeway after expiry", func(_ *testing.T, f *fixture, tok app.Tokens) string {
			f.now = tok.ExpiresAt.Add(9 * time.Second)
			return tok.AccessToken
		}, codes.OK},
		{"expired beyond the leeway", func(_ *testing.T, f *fixture, tok app.Tokens) string {
			f.now = tok.ExpiresAt.Add(11 * time.Second)
			return tok.AccessToken
		}, codes.Unauthenticated},
		{"ID token", func(_ *testing.T, _ *fixture, tok app.Tokens) string { return tok.IDToken }, codes.Unauthenticated},
		{"key rotated", func(t *testing.T, f *fixture, tok app.Tokens) string {
			if _, err := f.svc.RotateAppKey(ctx, f.app.ID); err != nil {
				t.Fatal(err)
			}
			return tok.AccessToken
		}, codes.Unauthenticated},
		{"app disabled", func(t *testing.T, f *fixture, tok app.Tokens) string {
			if _, err := f.svc.SetAppEnabled(ctx, f.app.ID, false); err != nil {
				t.Fatal(err)
			}
			return tok.AccessToken
		}, codes.PermissionDenied},
		{"user frozen", func(t *testing.T, f *fixture, tok app.Tokens) string {
			if err := f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, grace(f).ID, "0"); err != nil {
				t.Fatal(err)
			}
			return tok.AccessToken
		}, codes.PermissionDenied},
		{"user deleted", func(t *testing.T, f *fixture, tok app.Tokens) string {
			if err := f.svc.DeleteUser(ctx, f.app.ID, grace(f).ID); err != nil {
				t.Fatal(err)
			}
			return tok.AccessToken
		}, codes.PermissionDenied},
		{"issued by another deployment", func(t *testing.T, f *fixture, tok app.Tokens) string {
			other, err := app.New(app.Config{Store: f.store, Pepper: []byte("p"), Box: f.box, Issuer: "elsewhere",
				Clock: func() time.Time { return f.now }, Passwords: cheapPasswords})
			if err != nil {
				t.Fatal(err)
			}
			f.svc = other
			return tok.AccessToken
		}, codes.Unauthenticated},
		{"tampered payload", func(_ *testing.T, f *fixture, tok app.Tokens) string {
			parts := strings.Split(tok.AccessToken, ".")
			payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
			forged := strings.Replace(string(payload), grace(f).ID, f.user.ID, 1)
			return parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + parts[2]
		}, codes.Unauthenticated},
		{"unknown app in aud", func(*testing.T, *fixture, app.Tokens) string {
			c := jwt.MapClaims{"aud": "6b7a1f0e-0000-4000-8000-000000000000", "exp": time.Now().Add(time.Hour).Unix()}
			raw, _ := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
			return raw
		}, codes.Unauthenticated},
		{"garbage", func(_ *testing.T, _ *fixture, _ app.Tokens) string { return "not-a-jwt" }, codes.Unauthenticated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			tok, err := f.exchange(f.code(t, "grace@example.test"))
			if err != nil {
				t.Fatal(err)
			}
			raw := c.prep(t, f, tok)
			p, err := f.svc.VerifyAccessToken(ctx, raw)
			wantStatus(t, c.name, err, c.want)
			if c.want == codes.OK {
				u := grace(f)
				if p.Kind != authn.KindTenantToken || p.AppID != f.app.ID || p.UserID != u.ID || p.TenantID != u.TenantID || p.ProjectID != f.app.ProjectID || p.KeyType != "" {
					t.Errorf("principal = %+v", p)
				}
			}
		})
	}
}

func TestGetMeAndDeleteUser(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.signUp(t, "grace@example.test")
	grace, _ := f.svc.GetUser(ctx, f.app.ID, "grace@example.test")
	// A second member of Grace's tenant.
	member := f.newUser(t, f.app.ID, "member@example.test", grace.TenantID)

	me, err := f.svc.GetMe(ctx, f.app.ID, grace.ID)
	if err != nil || me.ID != grace.ID {
		t.Fatalf("GetMe = %v, %v", me.ID, err)
	}
	tok, err := f.exchange(f.code(t, "grace@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	f.drain(t)
	other := f.newApp(t)
	wantNotFound(t, f.svc.DeleteUser(ctx, other.ID, grace.ID))
	wantInvalid(t, f.svc.DeleteUser(ctx, f.app.ID, "grace@example.test"), "userId")

	// Grace has a session, which the deletion revokes; the member never signed in.
	for _, step := range []struct {
		user   domain.User
		left   int32
		events []eventsv1.Type
	}{
		{grace, 1, []eventsv1.Type{identityv1.EventUserDeleted, identityv1.EventSessionsRevoked}},
		{member, 0, []eventsv1.Type{identityv1.EventUserDeleted}},
	} {
		if err := f.svc.DeleteUser(ctx, f.app.ID, strings.ToUpper(step.user.ID)); err != nil {
			t.Fatal(err)
		}
		evs := f.drain(t)
		if !slices.Equal(types(evs), step.events) {
			t.Fatalf("events = %v, want %v", types(evs), step.events)
		}
		var p identityv1.UserDeleted
		if err := evs[0].Decode(&p); err != nil || p.GetUserId() != step.user.ID || p.GetTenantRef() != grace.TenantID || p.GetTenantUsersLeft() != step.left {
			t.Errorf("UserDeleted = %+v, %v; want %d users left", &p, err, step.left)
		}
	}
	wantNotFound(t, f.svc.DeleteUser(ctx, f.app.ID, grace.ID))
	_, err = f.svc.GetMe(ctx, f.app.ID, grace.ID)
	wantNotFound(t, err)
	_, err = f.refresh(tok.RefreshToken, "")
	wantStatus(t, "refresh after deletion", err, codes.InvalidArgument)
	// The address is free again.
	f.signUp(t, "grace@example.test")
}

func TestDiscoveryAndJWKS(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	d, err := f.svc.OpenIDConfiguration(ctx, strings.ToUpper(f.app.ID))
	if err != nil {
		t.Fatal(err)
	}
	if d.Issuer != testIssuer || d.AuthorizationEndpoint != "https://berth.test/login" || d.TokenEndpoint != "https://berth.test/api/v1/tokens" ||
		d.JWKSURI != "https://berth.test/apps/"+f.app.ID+"/.well-known/jwks.json" || !slices.Equal(d.SigningAlgs, []string{"RS256"}) ||
		!slices.Equal(d.Scopes, []string{"openid", "profile", "email"}) || !slices.Contains(d.GrantTypes, "refresh_token") ||
		!slices.Contains(d.Claims, "tenantId") {
		t.Errorf("discovery = %+v", d)
	}
	_, err = f.svc.OpenIDConfiguration(ctx, "6b7a1f0e-0000-4000-8000-000000000000")
	wantNotFound(t, err)
	_, err = f.svc.JWKS(ctx, "nope")
	wantNotFound(t, err)

	// A standard JWKS client: build the key from n and e, pick it by kid, verify with golang-jwt.
	k, err := f.svc.JWKS(ctx, f.app.ID)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := base64.RawURLEncoding.DecodeString(k.N)
	e, _ := base64.RawURLEncoding.DecodeString(k.E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	tok, err := f.exchange(f.code(t, "grace@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.NewParser(jwt.WithValidMethods([]string{k.Alg}), jwt.WithIssuer(d.Issuer), jwt.WithAudience(f.app.ID),
		jwt.WithTimeFunc(func() time.Time { return f.now })).Parse(tok.IDToken, func(tk *jwt.Token) (any, error) {
		if tk.Header["kid"] != k.Kid {
			t.Errorf("token kid %v is not the JWK's %s", tk.Header["kid"], k.Kid)
		}
		return pub, nil
	})
	if err != nil || !parsed.Valid {
		t.Fatalf("JWKS verification: %v", err)
	}
	if _, err := f.svc.RotateAppKey(ctx, f.app.ID); err != nil {
		t.Fatal(err)
	}
	if rotated, _ := f.svc.JWKS(ctx, f.app.ID); rotated.Kid == k.Kid || rotated.N == k.N {
		t.Error("JWKS still serves the rotated-out key")
	}
}

// The signing key opened for an app is kept, but never past a rotation: the first tokens after
// it are signed with the new key and verify against it.
func TestTokensAfterAKeyRotationAreSignedWithTheNewKey(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.exchange(f.code(t, "grace@example.test")); err != nil { // opens and keeps the first key
		t.Fatal(err)
	}
	if _, err := f.svc.RotateAppKey(ctx, f.app.ID); err != nil {
		t.Fatal(err)
	}
	tok, err := f.exchange(f.code(t, "grace@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.VerifyAccessToken(ctx, tok.AccessToken); err != nil {
		t.Fatalf("a token issued after the rotation does not verify: %v", err)
	}
}
