package idp

import (
	"context"
	"net/http"
	"time"
)

// Faults are one provider's misbehaviours, to test how a relying party copes with what providers
// do now and then. The zero value is a well-behaved provider.
type Faults struct {
	// TokenError makes the token endpoint answer every request with this OAuth error code
	// (invalid_request, invalid_client, invalid_grant, unauthorized_client,
	// unsupported_grant_type, invalid_scope, server_error or temporarily_unavailable).
	TokenError string `json:"tokenError"`
	// DelayMs holds every token and userinfo answer this long, to try the relying party's timeouts.
	DelayMs int `json:"delayMs"`
	// BadSignature signs ID tokens with a key JWKS never published, under the signing key's id.
	BadSignature bool `json:"badSignature"`
	// WrongIssuer puts an issuer other than the provider's into ID tokens.
	WrongIssuer bool `json:"wrongIssuer"`
}

// maxDelayMs bounds the delay knob: beyond two minutes it is a typo, not a test.
const maxDelayMs = 120_000

// tokenErrorStatus is the HTTP status the token endpoint answers each OAuth error with.
var tokenErrorStatus = map[string]int{
	"invalid_request": http.StatusBadRequest, "invalid_client": http.StatusUnauthorized, "invalid_grant": http.StatusBadRequest,
	"unauthorized_client": http.StatusBadRequest, "unsupported_grant_type": http.StatusBadRequest, "invalid_scope": http.StatusBadRequest,
	"server_error": http.StatusInternalServerError, "temporarily_unavailable": http.StatusServiceUnavailable,
}

func (f Faults) check() error {
	if _, ok := tokenErrorStatus[f.TokenError]; f.TokenError != "" && !ok {
		return &FieldError{"tokenError", "tokenError must be an OAuth error code: invalid_request, invalid_client, invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope, server_error or temporarily_unavailable"}
	}
	if f.DelayMs < 0 || f.DelayMs > maxDelayMs {
		return &FieldError{"delayMs", "delayMs must be a whole number from 0 to 120000"}
	}
	return nil
}

// SetFaults replaces the fault set of the provider called provider (opening it if need be); a
// *FieldError says what is wrong with a refused one.
func (s *Server) SetFaults(provider string, f Faults) error {
	p, err := s.provider(provider)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	p.mu.Lock()
	p.faults = f
	p.mu.Unlock()
	return nil
}

// faultsHandler serves /{p}/faults: GET answers the provider's fault set, POST replaces it with
// the JSON body (fields left out are off) and DELETE clears it; each answers the set in force.
func (s *Server) faultsHandler(p *provider, w http.ResponseWriter, r *http.Request) {
	var f Faults
	switch r.Method {
	case http.MethodPost:
		if ferr := decodeJSON(w, r, &f, "tokenError, delayMs, badSignature and wrongIssuer", false); ferr != nil {
			writeJSON(w, http.StatusBadRequest, ferr)
			return
		}
		if err := f.check(); err != nil {
			writeJSON(w, http.StatusBadRequest, fieldError(err))
			return
		}
		fallthrough
	case http.MethodDelete:
		p.mu.Lock()
		p.faults = f
		p.mu.Unlock()
		s.log.Info("idp sandbox: faults set", "provider", p.name, "faults", f)
	}
	p.mu.Lock()
	f = p.faults
	p.mu.Unlock()
	writeJSON(w, http.StatusOK, f)
}

// delay waits out the delay knob, or until the caller gives up; false means it gave up.
func (p *provider) delay(ctx context.Context) bool {
	p.mu.Lock()
	d := time.Duration(p.faults.DelayMs) * time.Millisecond
	p.mu.Unlock()
	if d == 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
