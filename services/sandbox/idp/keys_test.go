package idp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// kidOf is the key id in a compact JWS's header.
func kidOf(t *testing.T, jws string) string {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(jws, ".")[0])
	var h struct {
		Kid string `json:"kid"`
	}
	if err != nil || json.Unmarshal(b, &h) != nil || h.Kid == "" {
		t.Fatalf("no kid in %q", jws)
	}
	return h.Kid
}

// publishedKids are the key ids JWKS lists.
func (e *env) publishedKids() []string {
	e.t.Helper()
	code, body := e.do("GET", "/idpA/jwks", "", "")
	var set struct {
		Keys []struct {
			Kid, Alg, Use, Kty string
		}
	}
	if code != 200 || json.Unmarshal([]byte(body), &set) != nil {
		e.t.Fatalf("jwks: %d %s", code, body)
	}
	var kids []string
	for _, k := range set.Keys {
		if k.Alg != "RS256" || k.Use != "sig" || k.Kty != "RSA" {
			e.t.Fatalf("key %+v", k)
		}
		kids = append(kids, k.Kid)
	}
	return kids
}

func TestARotatedKeyStaysPublishedForItsGracePeriodThenGoes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.rp(oauth2.AuthStyleInHeader, oidc.ScopeOpenID)
	old, err := e.exchange(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	oldToken := old.Extra("id_token").(string)
	oldKid := kidOf(t, oldToken)
	if kids := e.publishedKids(); len(kids) != 1 || kids[0] != oldKid {
		t.Fatalf("before rotating: %v, want [%s]", kids, oldKid)
	}

	code, out := e.postJSON("POST", "/idpA/keys/rotate", `{"retireAfterSeconds": 600}`)
	newKid, _ := out["kid"].(string)
	if code != 200 || newKid == "" || newKid == oldKid {
		t.Fatalf("rotating: %d %v", code, out)
	}
	if kids := e.publishedKids(); len(kids) != 2 || kids[0] != oldKid || kids[1] != newKid {
		t.Fatalf("during the grace period: %v, want [%s %s]", kids, oldKid, newKid)
	}
	fresh, err := e.exchange(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	freshToken := fresh.Extra("id_token").(string)
	if kidOf(t, freshToken) != newKid {
		t.Fatalf("a token after the rotation is signed by %s, want %s", kidOf(t, freshToken), newKid)
	}
	for _, tok := range []string{oldToken, freshToken} {
		if _, err := r.verifier.Verify(ctx, tok); err != nil {
			t.Fatalf("during the grace period: %v", err)
		}
	}

	e.clock.Advance(ctx, 601*time.Second)
	if kids := e.publishedKids(); len(kids) != 1 || kids[0] != newKid {
		t.Fatalf("after the grace period: %v, want [%s]", kids, newKid)
	}
	later := e.rp(oauth2.AuthStyleInHeader, oidc.ScopeOpenID) // a relying party that fetches JWKS afresh
	if _, err := later.verifier.Verify(ctx, oldToken); err == nil {
		t.Fatal("a token of the retired key still verifies")
	}
	if _, err := later.verifier.Verify(ctx, freshToken); err != nil {
		t.Fatalf("the current key's token: %v", err)
	}
}

func TestARotationWithoutAGracePeriodRetiresTheOldKeyAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	before := e.publishedKids()
	if code, out := e.postJSON("POST", "/idpA/keys/rotate", `{"retireAfterSeconds": 0}`); code != 200 || len(out["keys"].([]any)) != 1 {
		t.Fatalf("rotating: %d %v", code, out)
	}
	if after := e.publishedKids(); len(after) != 1 || after[0] == before[0] {
		t.Fatalf("keys %v then %v", before, after)
	}
	for _, body := range []string{`{"retireAfterSeconds": -1}`, `{"retireAfterSeconds": 604801}`, `{"retire": 5}`} {
		if code, out := e.postJSON("POST", "/idpA/keys/rotate", body); code != 400 || out["error"] == nil {
			t.Errorf("%s: %d %v, want 400", body, code, out)
		}
	}
}

func TestRotatingInALoopRetiresTheOldestKeysEarlyAtEightPublished(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var kids []string
	for range 9 {
		_, out := e.postJSON("POST", "/idpA/keys/rotate", `{"retireAfterSeconds": 3600}`)
		kids = append(kids, out["kid"].(string))
	}
	if got := e.publishedKids(); len(got) != 8 || got[7] != kids[8] || got[0] != kids[1] {
		t.Fatalf("published %v after rotating to %v", got, kids)
	}
}
