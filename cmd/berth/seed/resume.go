package seed

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrNotHere is Resume's answer for a demo these services do not hold (memory stores, another
// database, other redirect URIs): the caller seeds a new one.
var ErrNotHere = errors.New("the earlier run's demo is not on these services")

// Resume brings back the demo an earlier run seeded on the same databases (prev, from demo.json),
// so a restart adds no second project. Its API keys' secrets exist only in prev: each app whose
// keys no longer authenticate at the edge gets new ones. The provider sandboxes keep their state in
// memory, so each app gets a new connection to this run's sandbox, and the pspx side (webhook
// endpoint, prices, tax rate) is made again there, as are the first app's clients at the identity
// providers; pspy's catalog is billing's and stays.
// The console member stays too, with the password demo.json holds.
func Resume(ctx context.Context, a Admin, prev Demo, o Options) (Demo, error) {
	if prev.AppID == "" || prev.PspyApp.AppID == "" || prev.Pspx.ConnectionID == "" || prev.RedirectURI != o.RedirectURI ||
		prev.ExampleURI != o.ExampleURI {
		return prev, ErrNotHere
	}
	d := prev
	d.BaseURL, d.Sandbox = o.BaseURL, o.Sandbox
	// A demo from before the console has no member to sign in with: it gets one. The member's
	// password is the earlier run's otherwise, as the database kept it.
	if d.Console.Email == "" {
		var err error
		if d.Console, err = seedConsole(ctx, a, d.ProjectID, o); err != nil {
			return d, err
		}
	} else {
		d.Console.URL = o.BaseURL + ConsolePath
	}
	for _, app := range []struct{ id, read, write *string }{{&d.AppID, &d.ReadKey, &d.WriteKey}, {&d.PspyApp.AppID, &d.PspyApp.ReadKey, &d.PspyApp.WriteKey}} {
		works, err := keysWork(ctx, d.BaseURL, *app.id, map[string]string{"read": *app.read, "write": *app.write})
		if err != nil {
			return d, err
		}
		if works {
			continue
		}
		read, write, err := createKeys(ctx, a, *app.id)
		if status.Code(err) == codes.NotFound {
			return prev, ErrNotHere
		}
		if err != nil {
			return d, err
		}
		*app.read, *app.write = read, write
	}
	// Billing knows the tenants as customers of the earlier run's provider accounts, which this
	// run's sandboxes never had: each app is connected to an account on them, and uses it.
	var err error
	if d.Pspx, err = seedPspx(ctx, a, d.AppID, o); err != nil {
		return d, err
	}
	// The sandbox's identity providers forgot the app's clients too: register them again, and
	// give the slots the new secrets.
	if d.Idp, err = seedIdp(ctx, a, d.AppID, o); err != nil {
		return d, err
	}
	return d, connectPspy(ctx, a, &d.PspyApp, o)
}

// keysWork reports whether the edge still accepts an app's keys (by type): anything but 401
// means the key authenticated (the write key may be refused the read route it asks, with 403).
func keysWork(ctx context.Context, baseURL, appID string, keys map[string]string) (bool, error) {
	for typ, key := range keys {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/v1/apps/"+appID+"/user-roles", nil)
		if err != nil {
			return false, err
		}
		req.Header.Set("X-API-KEY", key)
		req.Header.Set("X-API-KEY-TYPE", typ)
		req.Header.Set("X-CLIENT-ID", appID)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, fmt.Errorf("check the demo's keys: %w", err)
		}
		_ = res.Body.Close()
		if res.StatusCode == http.StatusUnauthorized {
			return false, nil
		}
	}
	return true, nil
}
