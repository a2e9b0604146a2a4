package console

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/sealbox"
)

// The session's limits: a browser left alone for IdleTimeout, or signed in for longer than
// AbsoluteTimeout, signs in again.
const (
	IdleTimeout     = 30 * time.Minute
	AbsoluteTimeout = 12 * time.Hour
)

// SessionCookie holds the sealed session; its owner string binds the sealed value to this use of
// the key, so nothing else sealed under it opens as a session.
const SessionCookie = "berth_console"

// maxSessionCookie bounds the cookie read: a sealed session is well under a kilobyte.
const maxSessionCookie = 4096

// session is what the cookie holds. Times are Unix seconds.
type session struct {
	Token     string `json:"t"`
	ProjectID string `json:"p"`
	Expires   int64  `json:"x"` // the operator token's expiry
	Started   int64  `json:"s"` // the sign-in, which the absolute limit counts from
	Seen      int64  `json:"v"` // the last request, which the idle limit counts from
}

var errSessionEnded = errors.New("the console session ended")

// sessions seals and opens the session cookie.
type sessions struct {
	box *sealbox.Box
	now func() time.Time
}

// end is when s stops being accepted: the earliest of the absolute limit, the token's expiry and
// the idle limit.
func (s session) end() time.Time {
	end := time.Unix(s.Started, 0).Add(AbsoluteTimeout)
	if x := time.Unix(s.Expires, 0); x.Before(end) {
		end = x
	}
	if idle := time.Unix(s.Seen, 0).Add(IdleTimeout); idle.Before(end) {
		end = idle
	}
	return end
}

// open reads r's session, refusing one that does not open, is malformed or has ended.
func (ss sessions) open(r *http.Request) (session, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > maxSessionCookie {
		return session{}, errSessionEnded
	}
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return session{}, errSessionEnded
	}
	plain, err := ss.box.Open(sealed, SessionCookie)
	if err != nil {
		return session{}, errSessionEnded
	}
	var s session
	if err := json.Unmarshal(plain, &s); err != nil || s.Token == "" || s.Started == 0 || s.Seen == 0 {
		return session{}, errSessionEnded
	}
	if !ss.now().Before(s.end()) {
		return session{}, errSessionEnded
	}
	return s, nil
}

// write seals s, marked as seen now, into the cookie, whose Max-Age runs to the absolute end (the
// browser drops it then; the idle end is checked on every request).
func (ss sessions) write(w http.ResponseWriter, r *http.Request, s session) error {
	now := ss.now()
	s.Seen = now.Unix()
	plain, err := json.Marshal(s)
	if err != nil {
		return err
	}
	sealed, err := ss.box.Seal(plain, SessionCookie)
	if err != nil {
		return err
	}
	last := time.Unix(s.Started, 0).Add(AbsoluteTimeout)
	if x := time.Unix(s.Expires, 0); x.Before(last) {
		last = x
	}
	setCookie(w, r, SessionCookie, base64.RawURLEncoding.EncodeToString(sealed), int(last.Sub(now).Seconds()))
	return nil
}

// clear deletes the session cookie.
func (ss sessions) clear(w http.ResponseWriter, r *http.Request) {
	setCookie(w, r, SessionCookie, "", -1)
}

// setCookie sets one of the console's cookies: HttpOnly, SameSite=Strict, scoped to Path, Secure
// unless the request came over plain HTTP to a loopback host. maxAge <= 0 deletes it.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	if maxAge <= 0 {
		maxAge, value = -1, ""
	}
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: Path, MaxAge: maxAge, HttpOnly: true, Secure: secure(r),
		// Strict: no request another site starts carries the session, which the CSRF check
		// relies on beside its token.
		SameSite: http.SameSiteStrictMode,
	})
}

// secure reports whether the console's cookies are Secure: always, except for a local run over
// plain HTTP on a loopback address, where a Secure cookie would never come back. A deployment
// behind a TLS proxy (no r.TLS here) keeps them Secure by its host name.
func secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err != nil || !a.Unmap().IsLoopback()
}

// KeySetting is the deployment's key sealing the console's session cookies. Unset, the edge
// serves no console; berthctl gen-secrets makes one.
var KeySetting = config.Setting{Name: "BERTH_CONSOLE_KEY", Kind: config.Key, Size: KeySize, Secret: true,
	Doc:  "AES-256-GCM key sealing the web console's session cookies (the same on every edge); unset, the edge serves no console",
	Hint: "make one with: berthctl gen-secrets, or openssl rand -hex 32"}
