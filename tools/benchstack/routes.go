package main

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/pkg/testkit/webflow"
)

// noBaseline are the routes the baseline does not serve, with why.
var noBaseline = map[string]string{
	"tokens":  "the refresh grant has no direct equivalent here",
	"signins": "a sign-in is its password hash, which a bare server would pay alike",
}

// routeOp is the operation that drives route r (a key of routeNames) on d's server with conns
// workers; the token route first signs a session in for each.
func routeOp(ctx context.Context, client *http.Client, r string, d seed.Demo, conns int) (op, error) {
	switch r {
	case "users":
		return getOp(client, d.BaseURL, "/v1/users/"+d.UserIDs[0], d), nil
	case "tenants":
		return getOp(client, d.BaseURL, "/v1/tenants/"+d.TenantID, d), nil
	case "tokens":
		tokens, err := signInTokens(ctx, client, d, conns, "bench."+randomHex(4)+"@example.com", "correct horse battery staple")
		if err != nil {
			return nil, fmt.Errorf("route 1 set-up: %w", err)
		}
		return refreshOp(client, d.BaseURL, d, tokens), nil
	case "signins":
		email, password := "bench."+randomHex(4)+"@example.com", "correct horse battery staple"
		if _, err := signIn(ctx, client, d, true, email, password, "bench-signup"); err != nil {
			return nil, fmt.Errorf("sign-in set-up: %w", err)
		}
		return func(ctx context.Context, w int) error {
			_, err := signIn(ctx, client, d, false, email, password, fmt.Sprintf("bench-%d", w))
			return err
		}, nil
	}
	return nil, fmt.Errorf("unknown route %q", r)
}

// getOp sends GET base+path with the demo app's read key, reading the whole body so the connection
// is reused.
func getOp(client *http.Client, base, path string, d seed.Demo) op {
	return func(ctx context.Context, _ int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-API-KEY", d.ReadKey)
		req.Header.Set("X-API-KEY-TYPE", "read")
		req.Header.Set("X-CLIENT-ID", d.AppID)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = res.Body.Close() }()
		if res.StatusCode/100 != 2 {
			b, _ := io.ReadAll(res.Body)
			return webflow.StatusError{Status: res.StatusCode, Body: string(b)}
		}
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
}

// refreshOp is route 1's refresh grant. Each worker keeps rotating its own token family: every
// answer's refresh token is the next request's, as a client keeping a session alive does. A worker
// whose chain broke (a failed answer) has no valid token left and fails from then on.
func refreshOp(client *http.Client, base string, d seed.Demo, tokens []string) op {
	return func(ctx context.Context, w int) error {
		if tokens[w] == "" {
			return fmt.Errorf("worker %d lost its refresh token family", w)
		}
		next, err := refresh(ctx, client, base, d, tokens[w])
		tokens[w] = next
		return err
	}
}

func refresh(ctx context.Context, client *http.Client, base string, d seed.Demo, token string) (string, error) {
	t, err := webflow.Exchange(ctx, client, base, map[string]string{"client_id": d.AppID, "grant_type": "refresh_token", "refresh_token": token})
	return t.Refresh, err
}

// signInTokens obtains n refresh tokens of separate families for one end user, the way an app's
// users get theirs: the hosted page (GET for the CSRF cookie, POST the form) signs the user up
// once and in n-1 more times, each redirect's authorization code is exchanged at route 1.
func signInTokens(ctx context.Context, client *http.Client, d seed.Demo, n int, email, password string) ([]string, error) {
	tokens := make([]string, n)
	for i := range n {
		refresh, err := signIn(ctx, client, d, i == 0, email, password, fmt.Sprintf("bench-%d", i))
		if err != nil {
			return nil, fmt.Errorf("sign-in %d: %w", i+1, err)
		}
		tokens[i] = refresh
	}
	return tokens, nil
}

// signIn signs the user up (signUp) or in on the hosted page and exchanges the redirect's code at
// route 1, returning the refresh token.
func signIn(ctx context.Context, client *http.Client, d seed.Demo, signUp bool, email, password, nonce string) (string, error) {
	code, err := webflow.Login(ctx, client, webflow.App{BaseURL: d.BaseURL, AppID: d.AppID, RedirectURI: d.RedirectURI}, signUp, email, password, nonce, nil)
	if err != nil {
		return "", err
	}
	t, err := webflow.Exchange(ctx, client, d.BaseURL, map[string]string{"client_id": d.AppID, "grant_type": "authorization_code",
		"code": code, "redirect_uri": d.RedirectURI, "nonce": nonce})
	if err != nil {
		return "", fmt.Errorf("code exchange: %w", err)
	}
	return t.Refresh, nil
}
