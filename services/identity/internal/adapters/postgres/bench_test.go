package postgres_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/identity/internal/adapters/postgres"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
	"github.com/berthhq/berth/services/identity/internal/domain/token"
)

// BenchmarkTokenExchange measures route 1's use case on PostgreSQL against its bare bound, each
// grant beside a baseline measured in the same run:
//
//   - refresh/exchange: a refresh grant as the published browser SDK sends it, each with the
//     refresh token the previous one returned (the rotation chain a client keeps);
//   - refresh/baseline: what any refresh must do at the least: the two RS256 signatures (access
//     and ID token) with a 2048-bit key, and the store's rotation write (RotateRefreshToken);
//   - code/exchange: an authorization code grant, each with a code stored beforehand;
//   - code/baseline: the two signatures and the store's write of the new refresh family.
func BenchmarkTokenExchange(b *testing.B) {
	ctx := context.Background()
	store := postgres.New(pgtest.New(b, "identity", postgres.Migrate))
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		b.Fatal(err)
	}
	svc, err := app.New(app.Config{Store: store, Pepper: []byte("pepper"), Box: box, Issuer: "bench", PublicURL: "https://berth.test/",
		Passwords: password.Params{MemoryKiB: 64, Time: 1, Threads: 1}})
	if err != nil {
		b.Fatal(err)
	}
	p, err := svc.CreateProject(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	a, err := svc.CreateApp(ctx, app.NewApp{ProjectID: p.ID, Name: "bench", RedirectURIs: []string{"https://app.test/cb"}})
	if err != nil {
		b.Fatal(err)
	}
	u, err := svc.CreateUser(ctx, app.NewUser{AppID: a.ID, Email: "bench@example.test", Name: "Bench User", GivenName: "Bench", FamilyName: "User", Language: "de"})
	if err != nil {
		b.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	claims := token.Access{Issuer: "bench", Subject: u.ID, Audience: a.ID, Language: "de", ID: uuid.NewString(), Nonce: "n",
		Scope: []string{"openid"}, PSC: []string{}, IssuedAt: time.Now().Unix(), Expiry: time.Now().Add(time.Hour).Unix(), Use: token.UseAccess}
	idClaims := token.ID{Issuer: "bench", Subject: u.ID, Audience: a.ID, Language: "de", ID: uuid.NewString(), Nonce: "n", Scope: []string{"openid"},
		IssuedAt: time.Now().Unix(), Expiry: time.Now().Add(time.Hour).Unix(), Use: token.UseID, Name: u.Name, Email: u.Email}
	sign := func(b *testing.B) {
		if _, err := token.Sign(key, "kid", claims); err != nil {
			b.Fatal(err)
		}
		if _, err := token.Sign(key, "kid", idClaims); err != nil {
			b.Fatal(err)
		}
	}
	newFamily := func(b *testing.B) (string, []byte) {
		secret, hash, err := domain.NewSecret()
		if err != nil {
			b.Fatal(err)
		}
		now := time.Now()
		f := domain.RefreshFamily{ID: uuid.NewString(), AppID: a.ID, UserID: u.ID, RedirectURI: "https://app.test/cb", Scope: "openid", AuthTime: now, CreatedAt: now}
		if err := store.CreateRefreshFamily(ctx, f, domain.RefreshToken{Hash: hash, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
			b.Fatal(err)
		}
		return secret, hash
	}

	b.Run("refresh/baseline", func(b *testing.B) {
		_, hash := newFamily(b)
		for b.Loop() {
			sign(b)
			_, next, err := domain.NewSecret()
			if err != nil {
				b.Fatal(err)
			}
			now := time.Now()
			if err := store.RotateRefreshToken(ctx, hash, domain.RefreshToken{Hash: next, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				b.Fatal(err)
			}
			hash = next
		}
	})
	b.Run("refresh/exchange", func(b *testing.B) {
		secret, _ := newFamily(b)
		for b.Loop() {
			t, err := svc.ExchangeToken(ctx, app.TokenRequest{ClientID: a.ID, GrantType: "authorization_code", RefreshToken: secret, Nonce: "n", Scope: "openid"})
			if err != nil {
				b.Fatal(err)
			}
			secret = t.RefreshToken
		}
	})
	b.Run("code/baseline", func(b *testing.B) {
		for b.Loop() {
			sign(b)
			newFamily(b)
		}
	})
	b.Run("code/exchange", func(b *testing.B) {
		codes := make([]string, 0, b.N)
		now := time.Now()
		for range b.N {
			code, hash, err := domain.NewSecret()
			if err != nil {
				b.Fatal(err)
			}
			if err := store.CreateAuthCode(ctx, domain.AuthCode{Hash: hash, AppID: a.ID, UserID: u.ID, RedirectURI: "https://app.test/cb",
				Nonce: "n", Scope: "openid", AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				b.Fatal(err)
			}
			codes = append(codes, code)
		}
		b.ResetTimer()
		for i := range b.N {
			if _, err := svc.ExchangeToken(ctx, app.TokenRequest{ClientID: a.ID, GrantType: "authorization_code", Code: codes[i],
				RedirectURI: "https://app.test/cb", Nonce: "n"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
