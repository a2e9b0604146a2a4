package app

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/token"
)

// TokenRequest is the route-1 body as the use case needs it.
type TokenRequest struct {
	ClientID, GrantType, RedirectURI, Code, Nonce, Scope, RefreshToken string
	// Service is the redirect's service, which the published SDKs send back: "" or one the hosted
	// login redirects with (email, or a provider slot idpA…idpD).
	Service string
}

// Tokens is an issued token set.
type Tokens struct {
	AccessToken, IDToken, RefreshToken string
	ExpiresAt                          time.Time // of the access token, whole seconds
	RedirectURI                        string    // without a trailing "/"
}

// GrantAuthorizationCode is the one grant_type a code exchange accepts.
const GrantAuthorizationCode = "authorization_code"

// Client errors of the token exchange. All are InvalidArgument (the edge answers [E4000]); the
// messages never say which secret part failed beyond the field.
var (
	errUnknownClient = fault.Invalid("client_id", "unknown or disabled client")
	errBadCode       = fault.Invalid("code", "code is invalid, expired or already used")
	errBadRefresh    = fault.Invalid("refresh_token", "refresh_token is invalid, expired or revoked")
	errUserInactive  = fault.Invalid("", "the user cannot be issued tokens")
)

// ExchangeToken is route 1. A non-empty refresh_token means a refresh whatever grant_type says
// (the published browser SDK refreshes with grant_type authorization_code); otherwise the grant
// must be authorization_code with code and redirect_uri.
func (s *Service) ExchangeToken(ctx context.Context, r TokenRequest) (Tokens, error) {
	a, err := s.tokenClient(ctx, r.ClientID)
	if err != nil {
		return Tokens{}, err
	}
	if r.Service != "" && r.Service != "email" && !domain.IsProviderSlot(r.Service) {
		return Tokens{}, fault.Invalid("service", "service must be email, idpA, idpB, idpC or idpD")
	}
	if r.RefreshToken != "" {
		return s.refresh(ctx, a, r)
	}
	switch {
	case r.GrantType != GrantAuthorizationCode:
		return Tokens{}, fault.Invalid("grant_type", "grant_type must be authorization_code, or a refresh_token must be sent")
	case r.Code == "":
		return Tokens{}, fault.Invalid("code", "code is required")
	case r.RedirectURI == "":
		return Tokens{}, fault.Invalid("redirect_uri", "redirect_uri is required")
	}
	return s.exchangeCode(ctx, a, r)
}

// tokenClient is the enabled app named by client_id.
func (s *Service) tokenClient(ctx context.Context, clientID string) (domain.App, error) {
	id := domain.CanonicalID(strings.TrimSpace(clientID))
	if !domain.IsUUID(id) {
		return domain.App{}, errUnknownClient
	}
	a, err := s.store.GetApp(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.App{}, errUnknownClient
	}
	if err != nil {
		return domain.App{}, err
	}
	if !a.Enabled {
		return domain.App{}, errUnknownClient
	}
	return a, nil
}

func (s *Service) exchangeCode(ctx context.Context, a domain.App, r TokenRequest) (Tokens, error) {
	if !domain.WellFormedSecret(r.Code) {
		return Tokens{}, errBadCode
	}
	// Consumed before any check: a code that failed once (wrong app, wrong redirect) is gone, so it
	// cannot be retried with other parameters.
	c, err := s.store.ConsumeAuthCode(ctx, domain.HashSecret(r.Code))
	if errors.Is(err, domain.ErrNotFound) {
		return Tokens{}, errBadCode
	}
	if err != nil {
		return Tokens{}, err
	}
	now := s.now()
	if c.AppID != a.ID || c.Expired(now) {
		return Tokens{}, errBadCode
	}
	if domain.TrimSlash(c.RedirectURI) != domain.TrimSlash(r.RedirectURI) {
		return Tokens{}, fault.Invalid("redirect_uri", "redirect_uri does not match the authorization request")
	}
	if c.Nonce != "" && r.Nonce != "" && c.Nonce != r.Nonce {
		return Tokens{}, fault.Invalid("nonce", "nonce does not match the authorization request")
	}
	u, err := s.activeUser(ctx, a.ID, c.UserID)
	if err != nil {
		return Tokens{}, err
	}
	secret, hash, err := domain.NewSecret()
	if err != nil {
		return Tokens{}, err
	}
	first := domain.RefreshToken{Hash: hash, CreatedAt: now, ExpiresAt: now.Add(a.RefreshTokenTTL)}
	// The family is the user's session: it starts now, ends with its first token unless a refresh
	// continues it, and is described by the browser of the sign-in that issued the code.
	f := domain.RefreshFamily{
		ID: uuid.NewString(), AppID: a.ID, UserID: u.ID, RedirectURI: c.RedirectURI, Scope: c.Scope,
		AuthTime: c.AuthTime, CreatedAt: now, LastUsedAt: now, ExpiresAt: first.ExpiresAt,
		ClientIP: c.ClientIP, UserAgent: c.UserAgent, AMR: c.AMR,
	}
	// The family keeps the scope granted at the authorization step, not what this exchange narrowed
	// it to: a later refresh may ask for any part of the grant, never more.
	return s.issueWhile(func() error {
		return s.store.CreateRefreshFamily(ctx, f, first)
	}, a, u, grant{
		nonce: firstOf(r.Nonce, c.Nonce), scope: domain.NarrowScope(c.Scope, r.Scope), authTime: c.AuthTime, amr: c.AMR,
		redirectURI: domain.TrimSlash(r.RedirectURI), refreshToken: secret, session: f.ID,
	}, now)
}

func (s *Service) refresh(ctx context.Context, a domain.App, r TokenRequest) (Tokens, error) {
	if !domain.WellFormedSecret(r.RefreshToken) {
		return Tokens{}, errBadRefresh
	}
	hash := domain.HashSecret(r.RefreshToken)
	t, f, err := s.store.GetRefreshToken(ctx, hash)
	if errors.Is(err, domain.ErrNotFound) {
		return Tokens{}, errBadRefresh
	}
	if err != nil {
		return Tokens{}, err
	}
	now := s.now()
	switch {
	case f.AppID != a.ID, f.Revoked:
		return Tokens{}, errBadRefresh
	case t.UsedAt != nil:
		if err := s.revokeStolen(ctx, f); err != nil {
			return Tokens{}, err
		}
		return Tokens{}, errBadRefresh
	case t.Expired(now):
		return Tokens{}, errBadRefresh
	}
	u, err := s.activeUser(ctx, a.ID, f.UserID)
	if err != nil {
		return Tokens{}, err
	}
	secret, next, err := domain.NewSecret()
	if err != nil {
		return Tokens{}, err
	}
	rotate := func() error {
		err := s.store.RotateRefreshToken(ctx, hash, domain.RefreshToken{Hash: next, CreatedAt: now, ExpiresAt: now.Add(a.RefreshTokenTTL)})
		if errors.Is(err, domain.ErrTokenSpent) {
			// Another refresh rotated this token first (or the family was revoked meanwhile).
			if err := s.revokeStolen(ctx, f); err != nil {
				return err
			}
			return errBadRefresh
		}
		if errors.Is(err, domain.ErrNotFound) {
			return errBadRefresh
		}
		return err
	}
	// The redirect URI is the one stored with the family (registered when the code was issued); a
	// redirect_uri in the refresh request is never echoed, so it cannot be an unregistered one.
	return s.issueWhile(rotate, a, u, grant{
		nonce: r.Nonce, scope: domain.NarrowScope(f.Scope, r.Scope), authTime: f.AuthTime, amr: f.AMR,
		redirectURI: domain.TrimSlash(f.RedirectURI), refreshToken: secret, session: f.ID,
	}, now)
}

// revokeStolen ends a family whose rotated token was shown again: someone kept a copy, so the whole
// chain ends, for both holders, with identity.sessions.revoked (reason token_reuse). A family that
// is revoked or expired already has nothing left to end.
func (s *Service) revokeStolen(ctx context.Context, f domain.RefreshFamily) error {
	err := s.revokeSessions(ctx, f.AppID, f.UserID, f.ID, domain.RevokedTokenReuse)
	if errors.Is(err, domain.ErrNotFound) {
		return nil
	}
	return err
}

// issueWhile signs the grant's tokens while write stores the grant (the refresh family, or the
// rotation): the two RSA signatures are CPU work and the write waits on the database, and neither
// needs the other's result, so running them side by side takes the longer of the two instead of
// their sum. Tokens are returned only once the write succeeded; when it fails they are dropped.
func (s *Service) issueWhile(write func() error, a domain.App, u domain.User, g grant, now time.Time) (Tokens, error) {
	type issued struct {
		tokens Tokens
		err    error
	}
	signed := make(chan issued, 1)
	go func() {
		t, err := s.issue(a, u, g, now)
		signed <- issued{t, err}
	}()
	werr := write()
	res := <-signed
	if werr != nil {
		return Tokens{}, werr
	}
	return res.tokens, res.err
}

// activeUser is the user tokens are issued for; a missing, frozen or deleted user is a client
// error of the exchange.
func (s *Service) activeUser(ctx context.Context, appID, userID string) (domain.User, error) {
	u, err := s.store.GetUser(ctx, appID, userID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.User{}, errUserInactive
	}
	if err != nil {
		return domain.User{}, err
	}
	if u.CheckActive() != nil {
		return domain.User{}, errUserInactive
	}
	return u, nil
}

// firstOf returns a unless it is empty.
func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// grant is what one exchange decided about the tokens to issue.
type grant struct {
	nonce, scope string
	authTime     time.Time
	amr          []string // the sign-in's authentication methods
	redirectURI  string
	refreshToken string
	session      string // the refresh family the tokens belong to (their sid claim)
}

// amrOf is the amr claim: the stored methods, or the password for a grant that has none (an
// in-memory one from before methods were recorded).
func amrOf(amr []string) []string {
	if len(amr) == 0 {
		return []string{domain.AMRPassword}
	}
	return amr
}

// issue signs the access and ID tokens with the app's current key.
func (s *Service) issue(a domain.App, u domain.User, g grant, now time.Time) (Tokens, error) {
	key, err := s.signingKey(a)
	if err != nil {
		return Tokens{}, err
	}
	kid := token.Thumbprint(&key.PublicKey)
	now = now.Truncate(time.Second)
	exp := now.Add(a.AccessTokenTTL)
	scope := domain.Scopes(g.scope)
	access := token.Access{
		Issuer: s.issuer, Subject: u.ID, Audience: a.ID, TenantID: u.TenantID, Language: u.Language,
		ID: uuid.NewString(), Nonce: g.nonce, AuthTime: g.authTime.Unix(), Scope: scope, PSC: []string{},
		IssuedAt: now.Unix(), Expiry: exp.Unix(), Use: token.UseAccess, Session: g.session, AMR: amrOf(g.amr),
	}
	id := token.ID{
		Issuer: s.issuer, Subject: u.ID, Audience: a.ID, TenantID: u.TenantID, Language: u.Language,
		ID: uuid.NewString(), Nonce: g.nonce, AuthTime: g.authTime.Unix(), Scope: scope,
		IssuedAt: now.Unix(), Expiry: exp.Unix(), Use: token.UseID, Session: g.session,
		AMR: amrOf(g.amr), ACR: domain.ACR(g.amr),
		Name: u.Name, GivenName: u.GivenName, FamilyName: u.FamilyName, MiddleName: u.MiddleName,
		Nickname: u.Nickname, PreferredUsername: u.PreferredUsername, Profile: u.Profile, Picture: u.Picture,
		Website: u.Website, Email: u.Email, EmailVerified: u.EmailVerified, Gender: u.Gender,
		Birthdate: u.Birthdate, Zoneinfo: u.Zoneinfo, Locale: u.Locale, PhoneNumber: u.PhoneNumber,
		PhoneNumberVerified: u.PhoneNumberVerified, UpdatedAt: u.UpdatedAt.Unix(),
	}
	accessJWT, err := token.Sign(key, kid, access)
	if err != nil {
		return Tokens{}, err
	}
	idJWT, err := token.Sign(key, kid, id)
	if err != nil {
		return Tokens{}, err
	}
	return Tokens{AccessToken: accessJWT, IDToken: idJWT, RefreshToken: g.refreshToken, ExpiresAt: exp, RedirectURI: g.redirectURI}, nil
}

// openedKey is an app's signing key as opened from the sealed form it was stored in.
type openedKey struct {
	sealed []byte
	key    *rsa.PrivateKey
}

// signingKey returns the app's private key. Opening one (AES-GCM, then parsing and checking the
// RSA key) cost about a fifth of a token exchange, so the key opened last is kept per app and used
// while the app's stored sealed key is the same bytes; a rotation stores new ones, which are opened
// on their first use.
func (s *Service) signingKey(a domain.App) (*rsa.PrivateKey, error) {
	if v, ok := s.appKeys.Load(a.ID); ok {
		if k := v.(openedKey); bytes.Equal(k.sealed, a.SealedPrivateKey) {
			return k.key, nil
		}
	}
	k, err := s.openSigningKey(a)
	if err != nil {
		return nil, err
	}
	s.appKeys.Store(a.ID, openedKey{sealed: bytes.Clone(a.SealedPrivateKey), key: k})
	return k, nil
}

// openSigningKey opens the app's sealed private key.
func (s *Service) openSigningKey(a domain.App) (*rsa.PrivateKey, error) {
	der, err := s.box.Open(a.SealedPrivateKey, a.ID)
	if err != nil {
		return nil, fmt.Errorf("open signing key of app %s: %w", a.ID, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse signing key of app %s: %w", a.ID, err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("signing key of app %s is not RSA", a.ID)
	}
	return rk, nil
}

// publicKey parses the app's current public key.
func publicKey(a domain.App) (*rsa.PublicKey, error) {
	block, _ := pem.Decode([]byte(a.PublicKeyPEM))
	if block == nil {
		return nil, fmt.Errorf("public key of app %s is not PEM", a.ID)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse public key of app %s: %w", a.ID, err)
	}
	rk, ok := k.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key of app %s is not RSA", a.ID)
	}
	return rk, nil
}
