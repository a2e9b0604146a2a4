package seed_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// TestResumeReplacesKeysThatNoLongerAuthenticateAndRefusesADemoTheServicesDoNotHold protects the
// restart of the all-in-one: an earlier demo whose key secrets fail gets new keys for the same
// app, and one whose app these services never had is left for a new seed.
func TestResumeReplacesKeysThatNoLongerAuthenticateAndRefusesADemoTheServicesDoNotHold(t *testing.T) {
	const redirect = "https://app.example.com/callback"
	env := stacktest.Start(t, "resume-test", redirect)
	opts := seed.Options{BaseURL: env.Stack.BaseURL, RedirectURI: redirect,
		Sandbox: seed.Sandbox{Pspx: env.Stack.Sandboxes.PspxURL, Pspy: env.Stack.Sandboxes.PspyURL, Idp: env.Stack.Sandboxes.IdpURL}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	stale := env.App
	stale.ReadKey = "berth_00000000000000000000000000000000_" + stacktest.RandomHex(32)
	got, err := seed.Resume(ctx, env.Admin, stale, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.AppID != env.App.AppID || got.ReadKey == stale.ReadKey || got.WriteKey == env.App.WriteKey {
		t.Fatalf("resumed app %s with read key changed=%v, write key changed=%v; want the same app with new keys",
			got.AppID, got.ReadKey != stale.ReadKey, got.WriteKey != env.App.WriteKey)
	}
	if got.PspyApp.ReadKey != env.App.PspyApp.ReadKey {
		t.Error("the second app's working keys were replaced")
	}
	if got.Idp["idpA"].Issuer != env.Stack.Sandboxes.IdpURL+"/idpA" || got.Idp["idpB"].ClientID == "" {
		t.Errorf("resumed identity providers = %v, want idpA and idpB on this run's sandbox", got.Idp)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, got.BaseURL+"/v1/apps/"+got.AppID+"/user-roles", nil)
	req.Header.Set("X-API-KEY", got.ReadKey)
	req.Header.Set("X-API-KEY-TYPE", "read")
	req.Header.Set("X-CLIENT-ID", got.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the new read key answers %d", res.StatusCode)
	}

	elsewhere := env.App
	elsewhere.AppID, elsewhere.ReadKey = "00000000-0000-4000-8000-"+stacktest.RandomHex(6), stale.ReadKey
	if _, err := seed.Resume(ctx, env.Admin, elsewhere, opts); !errors.Is(err, seed.ErrNotHere) {
		t.Fatalf("a demo of an app these services never had: %v, want ErrNotHere", err)
	}
	moved := env.App
	moved.RedirectURI = "https://elsewhere.example.com/callback"
	if _, err := seed.Resume(ctx, env.Admin, moved, opts); !errors.Is(err, seed.ErrNotHere) {
		t.Fatalf("a demo of another redirect URI: %v, want ErrNotHere", err)
	}
	// A demo seeded before the example app's page was a redirect URI cannot serve that page.
	withExample := opts
	withExample.ExampleURI = env.Stack.BaseURL + "/dev/example"
	if _, err := seed.Resume(ctx, env.Admin, env.App, withExample); !errors.Is(err, seed.ErrNotHere) {
		t.Fatalf("a demo without the example's redirect URI: %v, want ErrNotHere", err)
	}
}
