package idp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// exchange runs a whole flow for r and answers the token, or the exchange's error.
func (e *env) exchange(ctx context.Context, r *rp) (*oauth2.Token, error) {
	e.t.Helper()
	verifier := oauth2.GenerateVerifier()
	return r.config.Exchange(ctx, e.code(r, verifier), oauth2.VerifierOption(verifier))
}

func TestTheTokenErrorFaultAnswersItsOAuthErrorUntilCleared(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.rp(oauth2.AuthStyleInHeader, oidc.ScopeOpenID)
	for _, c := range []struct {
		fault  string
		status int
	}{{"temporarily_unavailable", 503}, {"server_error", 500}, {"invalid_grant", 400}, {"invalid_client", 401}} {
		if code, out := e.postJSON("POST", "/idpA/faults", `{"tokenError": "`+c.fault+`"}`); code != 200 || out["tokenError"] != c.fault {
			t.Fatalf("setting the fault: %d %v", code, out)
		}
		_, err := e.exchange(ctx, r)
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.ErrorCode != c.fault || re.Response.StatusCode != c.status {
			t.Fatalf("with tokenError %s: %v, want that error with %d", c.fault, err, c.status)
		}
	}
	if code, out := e.postJSON("DELETE", "/idpA/faults", ""); code != 200 || out["tokenError"] != "" {
		t.Fatalf("clearing: %d %v", code, out)
	}
	if _, err := e.exchange(ctx, r); err != nil {
		t.Fatalf("after clearing: %v", err)
	}
}

func TestTheDelayFaultHoldsTheTokenAnswerPastTheRelyingPartysTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.rp(oauth2.AuthStyleInHeader, oidc.ScopeOpenID)
	if code, out := e.postJSON("POST", "/idpA/faults", `{"delayMs": 300}`); code != 200 || out["delayMs"] != 300.0 {
		t.Fatalf("setting the fault: %d %v", code, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := e.exchange(ctx, r); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a 100 ms deadline against a 300 ms delay: %v", err)
	}
	start := time.Now()
	if _, err := e.exchange(context.Background(), r); err != nil || time.Since(start) < 300*time.Millisecond {
		t.Fatalf("without a deadline: %v after %v", err, time.Since(start))
	}
}

func TestTheSignatureAndIssuerFaultsMakeTheRelyingPartysVerificationFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.rp(oauth2.AuthStyleInParams, oidc.ScopeOpenID, "email")
	for _, c := range []struct{ fault, verifyError string }{
		{`{"badSignature": true}`, "signature"},
		{`{"wrongIssuer": true}`, "issued by a different provider"},
		{`{}`, ""},
	} {
		if code, out := e.postJSON("POST", "/idpA/faults", c.fault); code != 200 {
			t.Fatalf("setting %s: %d %v", c.fault, code, out)
		}
		tok, err := e.exchange(ctx, r)
		if err != nil {
			t.Fatalf("%s: the exchange itself works: %v", c.fault, err)
		}
		_, err = r.verifier.Verify(ctx, tok.Extra("id_token").(string))
		if c.verifyError == "" && err != nil || c.verifyError != "" && (err == nil || !strings.Contains(err.Error(), c.verifyError)) {
			t.Fatalf("%s: verifying: %v, want an error mentioning %q", c.fault, err, c.verifyError)
		}
	}
}

func TestAFaultSetWithATypoIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if code, _ := e.postJSON("POST", "/idpA/faults", `{"wrongIssuer": true}`); code != 200 {
		t.Fatal("setting a valid fault failed")
	}
	for _, c := range []struct{ body, field string }{
		{`{"badSignatures": true}`, "badSignatures"},
		{`{"tokenError": "nope"}`, "tokenError"},
		{`{"delayMs": -1}`, "delayMs"},
		{`{"delayMs": 120001}`, "delayMs"},
		{`{"delayMs": "1"}`, "delayMs"},
		{`[]`, ""},
		{``, ""},
	} {
		if code, out := e.postJSON("POST", "/idpA/faults", c.body); code != 400 || out["field"] != nil && out["field"] != c.field || out["error"] == nil {
			t.Errorf("%q: %d %v, want 400 naming %q", c.body, code, out, c.field)
		}
	}
	if code, out := e.postJSON("GET", "/idpA/faults", ""); code != 200 || out["wrongIssuer"] != true {
		t.Fatalf("the faults in force: %d %v", code, out)
	}
}
