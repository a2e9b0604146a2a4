package webflow

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

// App is the app a flow signs in to.
type App struct {
	BaseURL     string // the REST edge
	AppID       string
	RedirectURI string
}

// StatusError is an answer with an unexpected status.
type StatusError struct {
	Status int
	Body   string
}

func (e StatusError) Error() string { return fmt.Sprintf("HTTP %d: %.200s", e.Status, e.Body) }

// Login submits the hosted login page as a browser does (GET for the CSRF cookie, POST the form)
// and returns the authorization code of its redirect. header goes on both requests (a proxy's
// X-Forwarded-For, say).
func Login(ctx context.Context, client *http.Client, app App, signUp bool, email, password, nonce string, header http.Header) (string, error) {
	typ := "signIn"
	if signUp {
		typ = "signUp"
	}
	params := url.Values{"client_id": {app.AppID}, "redirect_uri": {app.RedirectURI}, "state": {strings.Repeat("s", 32)},
		"type": {typ}, "nonce": {nonce}, "scope": {"openid profile email"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, app.BaseURL+"/login?"+params.Encode(), nil)
	if err != nil {
		return "", err
	}
	addHeader(req, header)
	res, err := client.Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	var csrf *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "berth_login_csrf" {
			csrf = c
		}
	}
	if res.StatusCode != http.StatusOK || csrf == nil {
		return "", fmt.Errorf("login page: HTTP %d, csrf cookie %v", res.StatusCode, csrf != nil)
	}
	form := url.Values{"csrf_token": {csrf.Value}, "email": {email}, "password": {password}, "name": {"Flow User"}}
	for k, v := range params {
		form[k] = v
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, app.BaseURL+"/login", strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	addHeader(req, header)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: csrf.Name, Value: csrf.Value})
	res, err = client.Do(req)
	if err != nil {
		return "", err
	}
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		return "", StatusError{res.StatusCode, string(body)}
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", fmt.Errorf("login redirect without a code: %q", res.Header.Get("Location"))
	}
	return loc.Query().Get("code"), nil
}

func addHeader(req *http.Request, h http.Header) {
	for k, vs := range h {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
}

// Tokens is what route 1 answers that a client keeps.
type Tokens struct {
	Access, Refresh string
}

// tokenAnswer is the part of route 1's collection envelope a client reads.
type tokenAnswer struct {
	Items []struct {
		AccessToken  string `json:"accessToken"`
		RefreshToken string `json:"refreshToken"`
	} `json:"items"`
}

// Exchange posts a token request (a code exchange or a refresh) to route 1.
func Exchange(ctx context.Context, client *http.Client, base string, body map[string]string) (Tokens, error) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/tokens", bytes.NewReader(raw))
	if err != nil {
		return Tokens{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return Tokens{}, err
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Tokens{}, err
	}
	if res.StatusCode/100 != 2 {
		return Tokens{}, StatusError{res.StatusCode, string(b)}
	}
	var a tokenAnswer
	if err := json.Unmarshal(b, &a); err != nil || len(a.Items) != 1 || a.Items[0].RefreshToken == "" || a.Items[0].AccessToken == "" {
		return Tokens{}, fmt.Errorf("token answer without tokens: %.200s", b)
	}
	return Tokens{Access: a.Items[0].AccessToken, Refresh: a.Items[0].RefreshToken}, nil
}
