package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// demo is what the all-in-one writes to demo.json: the seeded app, its keys, tenant and users.
type demo struct {
	BaseURL     string   `json:"baseUrl"`
	RedirectURI string   `json:"redirectUri"`
	AppID       string   `json:"appId"`
	ReadKey     string   `json:"readKey"`
	TenantID    string   `json:"tenantId"`
	UserIDs     []string `json:"userIds"`
}

// getOp sends GET base+path with the demo app's read key, reading the whole body so the connection
// is reused.
func getOp(client *http.Client, base, path string, d demo) op {
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
		defer res.Body.Close()
		if res.StatusCode/100 != 2 {
			b, _ := io.ReadAll(res.Body)
			return statusError{res.StatusCode, string(b)}
		}
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
}

// refreshOp is route 1's refresh grant. Each worker keeps rotating its own token family: every
// answer's refresh token is the next request's, as a client keeping a session alive does. A worker
// whose chain broke (a failed answer) has no valid token left and fails from then on.
func refreshOp(client *http.Client, base string, d demo, tokens []string) op {
	return func(ctx context.Context, w int) error {
		if tokens[w] == "" {
			return fmt.Errorf("worker %d lost its refresh token family", w)
		}
		next, err := refresh(ctx, client, base, d, tokens[w])
		tokens[w] = next
		return err
	}
}

// tokenAnswer is the part of route 1's collection envelope the benchmark needs.
type tokenAnswer struct {
	Items []struct {
		RefreshToken string `json:"refreshToken"`
	} `json:"items"`
}

// exchange posts a token request and returns the new refresh token.
func exchange(ctx context.Context, client *http.Client, base string, body map[string]string) (string, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/tokens", bytes.NewReader(raw))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode/100 != 2 {
		return "", statusError{res.StatusCode, string(b)}
	}
	var a tokenAnswer
	if err := json.Unmarshal(b, &a); err != nil || len(a.Items) != 1 || a.Items[0].RefreshToken == "" {
		return "", fmt.Errorf("token answer without a refresh token: %.200s", b)
	}
	return a.Items[0].RefreshToken, nil
}

func refresh(ctx context.Context, client *http.Client, base string, d demo, token string) (string, error) {
	return exchange(ctx, client, base, map[string]string{"client_id": d.AppID, "grant_type": "refresh_token", "refresh_token": token})
}

// signInTokens obtains n refresh tokens of separate families for one end user, the way an app's
// users get theirs: the hosted page (GET for the CSRF cookie, POST the form) signs the user up
// once and in n-1 more times, each redirect's authorization code is exchanged at route 1.
func signInTokens(ctx context.Context, client *http.Client, d demo, n int, email, password string) ([]string, error) {
	tokens := make([]string, n)
	for i := range n {
		nonce := fmt.Sprintf("bench-%d", i)
		code, err := login(ctx, client, d, i == 0, email, password, nonce)
		if err != nil {
			return nil, fmt.Errorf("sign-in %d: %w", i+1, err)
		}
		tokens[i], err = exchange(ctx, client, d.BaseURL, map[string]string{"client_id": d.AppID, "grant_type": "authorization_code",
			"code": code, "redirect_uri": d.RedirectURI, "nonce": nonce})
		if err != nil {
			return nil, fmt.Errorf("code exchange %d: %w", i+1, err)
		}
	}
	return tokens, nil
}

// login submits the hosted login page and returns the authorization code of its redirect.
func login(ctx context.Context, client *http.Client, d demo, signUp bool, email, password, nonce string) (string, error) {
	typ := "signIn"
	if signUp {
		typ = "signUp"
	}
	params := url.Values{"client_id": {d.AppID}, "redirect_uri": {d.RedirectURI}, "state": {strings.Repeat("s", 32)},
		"type": {typ}, "nonce": {nonce}, "scope": {"openid profile email"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.BaseURL+"/login?"+params.Encode(), nil)
	if err != nil {
		return "", err
	}
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	var csrf *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "berth_login_csrf" {
			csrf = c
		}
	}
	if res.StatusCode != http.StatusOK || csrf == nil {
		return "", fmt.Errorf("login page: HTTP %d, csrf cookie %v", res.StatusCode, csrf != nil)
	}
	form := url.Values{"csrf_token": {csrf.Value}, "email": {email}, "password": {password}, "name": {"Bench User"}}
	for k, v := range params {
		form[k] = v
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, d.BaseURL+"/login", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: csrf.Name, Value: csrf.Value})
	res, err = client.Do(req)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return "", statusError{res.StatusCode, string(body)}
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", fmt.Errorf("login redirect without a code: %q", res.Header.Get("Location"))
	}
	return loc.Query().Get("code"), nil
}
