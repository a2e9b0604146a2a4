package idp

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Lifetimes, in sandbox time.
const (
	codeLifetime    = time.Minute      // an authorization code, as short as real providers keep them
	tokenLifetime   = time.Hour        // an access token and an ID token
	pendingLifetime = 30 * time.Minute // an authorization request waiting for the tester's answer
	defaultRetire   = time.Hour        // how long a rotated-out key stays published unless told
	maxRetire       = 7 * 24 * time.Hour
)

// maxPending bounds the live authorization requests, codes and tokens of one provider: a loop
// that opens the page or redeems codes endlessly gets errors rather than eating the memory.
const maxPending = 10_000

// provider is one OpenID provider: its keys, clients and the grants in flight.
type provider struct {
	name, issuer string

	mu       sync.Mutex
	keys     []*signingKey // oldest first; the last one signs
	rogue    *rsa.PrivateKey
	clients  map[string]*client
	requests map[string]*authRequest // authorization requests shown on the page, by their id
	codes    map[string]*grant
	tokens   map[string]*grant // by access token
	people   map[string]*identity
	faults   Faults
}

// signingKey is one RSA key; retireAt, once set, is when JWKS stops publishing it.
type signingKey struct {
	kid      string
	key      *rsa.PrivateKey
	retireAt time.Time
}

// identity is a person who signed in at the provider; sub stays theirs for the provider's life.
type identity struct {
	Sub, Email, Name string
	EmailVerified    bool
}

// grant is what the tester allowed: first as an authorization code, then as an access token.
type grant struct {
	client, redirectURI, challenge, nonce string
	scopes                                []string
	who                                   identity
	authTime, expires                     time.Time
	spent                                 bool   // a code that was redeemed, or presented once already
	accessToken                           string // the token a code was redeemed for, revoked when the code comes back
}

func newProvider(name, issuer string) (*provider, error) {
	k, err := newSigningKey()
	if err != nil {
		return nil, err
	}
	return &provider{
		name: name, issuer: issuer, keys: []*signingKey{k},
		clients: map[string]*client{}, requests: map[string]*authRequest{}, codes: map[string]*grant{},
		tokens: map[string]*grant{}, people: map[string]*identity{},
	}, nil
}

func newSigningKey() (*signingKey, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("idp sandbox: generating a key: %w", err)
	}
	thumb, err := (&jose.JSONWebKey{Key: &key.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("idp sandbox: naming a key: %w", err)
	}
	return &signingKey{kid: base64.RawURLEncoding.EncodeToString(thumb)[:16], key: key}, nil
}

// published are the keys JWKS lists at now: the signing key and the retired ones still in their
// grace period. The caller holds p.mu.
func (p *provider) published(now time.Time) []*signingKey {
	var out []*signingKey
	for _, k := range p.keys {
		if k.retireAt.IsZero() || now.Before(k.retireAt) {
			out = append(out, k)
		}
	}
	return out
}

// maxKeys bounds the keys JWKS publishes at once: rotating in a loop retires the oldest early
// rather than growing the set without end.
const maxKeys = 8

// rotate makes a new signing key and keeps the old one published for retireAfter; keys whose
// time is up are forgotten. The caller holds p.mu; the new key is made beforehand.
func (p *provider) rotate(fresh *signingKey, now time.Time, retireAfter time.Duration) {
	p.keys[len(p.keys)-1].retireAt = now.Add(retireAfter)
	keys := p.published(now)
	if len(keys) >= maxKeys {
		keys = keys[len(keys)-maxKeys+1:]
	}
	p.keys = append(keys, fresh)
}

// sign serializes claims as a compact JWS signed by the current key, or, with the bad-signature
// fault, by a key the provider never published under the current key's id.
func (p *provider) sign(claims any) (string, error) {
	current := p.keys[len(p.keys)-1]
	key := current.key
	if p.faults.BadSignature {
		if p.rogue == nil {
			var err error
			if p.rogue, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
				return "", fmt.Errorf("idp sandbox: generating the rogue key: %w", err)
			}
		}
		key = p.rogue
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: current.kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("idp sandbox: signer: %w", err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("idp sandbox: claims: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("idp sandbox: signing: %w", err)
	}
	return jws.CompactSerialize()
}

// prune forgets what has expired, before something new is stored: the maps only hold what can
// still be used, and spent codes as long as a token they were redeemed for can live, so a replay
// is recognised as one and revokes it.
func (p *provider) prune(now time.Time) {
	for id, r := range p.requests {
		if !now.Before(r.expires) {
			delete(p.requests, id)
		}
	}
	for c, g := range p.codes {
		end := g.expires
		if g.spent {
			end = end.Add(tokenLifetime)
		}
		if !now.Before(end) {
			delete(p.codes, c)
		}
	}
	for t, g := range p.tokens {
		if !now.Before(g.expires) {
			delete(p.tokens, t)
		}
	}
}

// discovery serves the provider's metadata (OpenID Connect Discovery 1.0).
func (s *Server) discovery(p *provider, w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                         p.issuer,
		"authorization_endpoint":                         p.issuer + "/authorize",
		"token_endpoint":                                 p.issuer + "/token",
		"userinfo_endpoint":                              p.issuer + "/userinfo",
		"jwks_uri":                                       p.issuer + "/jwks",
		"response_types_supported":                       []string{"code"},
		"response_modes_supported":                       []string{"query"},
		"grant_types_supported":                          []string{"authorization_code"},
		"subject_types_supported":                        []string{"public"},
		"id_token_signing_alg_values_supported":          []string{"RS256"},
		"scopes_supported":                               supportedScopes,
		"claims_supported":                               []string{"iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "azp", "at_hash", "email", "email_verified", "name"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post"},
		"code_challenge_methods_supported":               []string{"S256"},
		"authorization_response_iss_parameter_supported": true,
	})
}

// jwks serves the published public keys.
func (s *Server) jwks(p *provider, w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	set := jose.JSONWebKeySet{}
	for _, k := range p.published(s.clock.Now()) {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.key.PublicKey, KeyID: k.kid, Algorithm: string(jose.RS256), Use: "sig"})
	}
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, set)
}

// rotateKeys serves POST /{p}/keys/rotate {"retireAfterSeconds": N}: a new key signs from now
// on and the previous one stays in JWKS for N seconds of sandbox time (3600 when left out).
func (s *Server) rotateKeys(p *provider, w http.ResponseWriter, r *http.Request) {
	var body struct {
		RetireAfterSeconds *int64 `json:"retireAfterSeconds"`
	}
	if ferr := decodeJSON(w, r, &body, "retireAfterSeconds", true); ferr != nil {
		writeJSON(w, http.StatusBadRequest, ferr)
		return
	}
	retire := defaultRetire
	if body.RetireAfterSeconds != nil {
		retire = time.Duration(*body.RetireAfterSeconds) * time.Second
		if *body.RetireAfterSeconds < 0 || retire > maxRetire {
			writeJSON(w, http.StatusBadRequest, adminError{"retireAfterSeconds must be a whole number from 0 to 604800", "retireAfterSeconds"})
			return
		}
	}
	fresh, err := newSigningKey()
	if err != nil {
		s.log.Error("idp sandbox: rotating keys", "provider", p.name, "err", err)
		writeJSON(w, http.StatusInternalServerError, adminError{Error: "the new key could not be made"})
		return
	}
	now := s.clock.Now()
	p.mu.Lock()
	p.rotate(fresh, now, retire)
	type keyState struct {
		Kid       string `json:"kid"`
		RetiresAt string `json:"retiresAt,omitempty"`
	}
	out := []keyState{}
	for _, k := range p.keys {
		ks := keyState{Kid: k.kid}
		if !k.retireAt.IsZero() {
			ks.RetiresAt = k.retireAt.Format(time.RFC3339)
		}
		out = append(out, ks)
	}
	p.mu.Unlock()
	s.log.Info("idp sandbox: key rotated", "provider", p.name, "kid", fresh.kid, "retireAfter", retire)
	writeJSON(w, http.StatusOK, map[string]any{"kid": fresh.kid, "keys": out})
}
