package login

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"

	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/text"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// maxParam bounds every authorization parameter. Real values are ids, URLs and random strings far
// below it; the bound keeps hostile links from bloating the page and the backend calls.
const maxParam = 2048

// signUpType is the type value that selects the sign-up form. Every other value (signIn, and the
// logout/unauthenticated types the published browser SDK sends to the same page) shows sign-in.
const signUpType = "signUp"

// Params are the authorization-request parameters the page carries from the link through the form
// to the backend.
type Params struct {
	ClientID    string
	RedirectURI string
	State       string
	Nonce       string
	Scope       string
	// Referral is the optional referral code of an invite link; the backend records it on sign-up.
	Referral string
	SignUp   bool
	// Language is the language the link asked for (its language or lng parameter, en or de), ""
	// when it named none: the form carries it so the answer to the post speaks it too.
	Language string
}

var errMissingParams = errors.New("the link lacks client_id, redirect_uri or state")
var errLongParam = errors.New("a parameter is too long")
var errBadParam = errors.New("a parameter breaks the text rule")

// ParamsFrom reads the parameters from a query (GET) or a form body (POST). client_id,
// redirect_uri and state are required: without state the client could not tie the redirect to
// the request it made, which is what protects it against forged redirects.
func ParamsFrom(v url.Values) (Params, error) {
	p := Params{
		ClientID:    v.Get("client_id"),
		RedirectURI: v.Get("redirect_uri"),
		State:       v.Get("state"),
		Nonce:       v.Get("nonce"),
		Scope:       v.Get("scope"),
		Referral:    v.Get("referral"),
		SignUp:      v.Get("type") == signUpType,
		Language:    locale.Requested(v),
	}
	for _, s := range []string{p.ClientID, p.RedirectURI, p.State, p.Nonce, p.Scope, p.Referral, v.Get("type")} {
		if len(s) > maxParam {
			return Params{}, errLongParam
		}
		// Invalid UTF-8 could not even be sent to identity, and a control character is never part
		// of an id, URL or random value: the link is broken either way.
		if !text.Valid(s) {
			return Params{}, errBadParam
		}
	}
	if p.ClientID == "" || p.RedirectURI == "" || p.State == "" {
		return Params{}, errMissingParams
	}
	return p, nil
}

// typeName is the value of the type parameter for this form.
func (p Params) typeName() string {
	if p.SignUp {
		return signUpType
	}
	return "signIn"
}

// Proto is the backend's view of the parameters.
func (p Params) Proto() *identityv1.LoginParams {
	return &identityv1.LoginParams{
		ClientId:    p.ClientID,
		RedirectUri: p.RedirectURI,
		State:       p.State,
		Nonce:       p.Nonce,
		Scope:       p.Scope,
		Referral:    p.Referral,
	}
}

// switchURL is the link to the other form (sign-in <-> sign-up) with the same parameters.
func (p Params) switchURL() string {
	other := p
	other.SignUp = !p.SignUp
	return Path + "?" + other.Query().Encode()
}

// RecoverURL is the link to the password-reset pages carrying the authorization request, which
// they continue once the password is reset.
func (p Params) RecoverURL() string {
	q := p.Query()
	q.Del("type")
	q.Del("referral")
	return RecoverPath + "?" + q.Encode()
}

// Query renders the parameters as the page's query string.
func (p Params) Query() url.Values {
	v := url.Values{
		"client_id":    {p.ClientID},
		"redirect_uri": {p.RedirectURI},
		"state":        {p.State},
		"type":         {p.typeName()},
	}
	if p.Nonce != "" {
		v.Set("nonce", p.Nonce)
	}
	if p.Scope != "" {
		v.Set("scope", p.Scope)
	}
	if p.Referral != "" {
		v.Set("referral", p.Referral)
	}
	if p.Language != "" {
		v.Set("language", p.Language)
	}
	return v
}

// RedirectSource is the CSP source expression for redirect_uri's origin, or "" when it cannot be
// expressed safely. Browsers apply form-action to the redirects that follow a form post, so the
// 303 to the app is only followed when its origin is allowed there. redirect_uri has already been
// checked against the app's registered URIs; the character check keeps a value that passed that
// check from still injecting directives into the header.
func RedirectSource(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	if strings.IndexFunc(u.Host, func(r rune) bool { return !hostRune(r) }) >= 0 {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// hostRune reports whether r may appear in a host[:port] of a CSP source (IPv6 brackets included).
func hostRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '-' || r == ':' || r == '[' || r == ']'
}

// ParseProxies reads a comma-separated list of addresses and CIDR prefixes (BERTH_TRUSTED_PROXIES):
// "10.0.0.0/8, 192.0.2.7". An empty list trusts no proxy.
func ParseProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR prefix", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
