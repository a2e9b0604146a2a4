package idp

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"github.com/berthhq/berth/services/sandbox/clock"
)

//go:embed pages.html
var pagesHTML string

var pages = template.Must(template.New("pages").Parse(pagesHTML))

// nameFormat is a provider's name, the path segment that tells the providers apart.
var nameFormat = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,39}$`)

// maxProviders bounds how many providers one sandbox holds: each costs an RSA key, and a test
// suite that names far more is leaking names.
const maxProviders = 256

// Config configures a sandbox.
type Config struct {
	Clock *clock.Clock // nil: a clock of its own at real time
	// BaseURL is the absolute URL the sandbox is reachable at, such as
	// http://127.0.0.1:8090/_sandbox/idp; provider P's issuer is BaseURL/P.
	BaseURL string
	Log     *slog.Logger // nil: discard
}

// Server is the sandbox, an http.Handler serving every provider under /<name>/, relative to
// wherever it is mounted, and a page for people at its root.
type Server struct {
	clock *clock.Clock
	base  string
	log   *slog.Logger
	mux   *http.ServeMux

	mu        sync.Mutex
	providers map[string]*provider
}

// New returns a sandbox without providers; they appear as requests name them.
func New(cfg Config) *Server {
	s := &Server{clock: cfg.Clock, base: strings.TrimRight(cfg.BaseURL, "/"), log: cfg.Log, providers: map[string]*provider{}}
	if s.clock == nil {
		s.clock = clock.New()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.routes()
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Issuer is the issuer URL of the provider called name (which need not exist yet).
func (s *Server) Issuer(name string) string { return s.base + "/" + name }

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.showIndex)
	for pattern, h := range map[string]func(*provider, http.ResponseWriter, *http.Request){
		"GET /{p}/.well-known/openid-configuration": s.discovery,
		"GET /{p}/jwks":            s.jwks,
		"GET /{p}/authorize":       s.authorize,
		"POST /{p}/authorize":      s.answerAuthorize,
		"POST /{p}/token":          s.token,
		"GET /{p}/userinfo":        s.userinfo,
		"POST /{p}/userinfo":       s.userinfo,
		"POST /{p}/clients":        s.registerClient,
		"GET /{p}/clients/{id}":    s.getClient,
		"DELETE /{p}/clients/{id}": s.deleteClient,
		"GET /{p}/faults":          s.faultsHandler,
		"POST /{p}/faults":         s.faultsHandler,
		"DELETE /{p}/faults":       s.faultsHandler,
		"POST /{p}/keys/rotate":    s.rotateKeys,
	} {
		m.HandleFunc(pattern, s.withProvider(h))
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, adminError{Error: "no such endpoint: " + r.Method + " " + r.URL.Path + "; GET the sandbox's base URL for the list"})
	})
	s.mux = m
}

// withProvider finds (or opens) the provider a request names before h answers it.
func (s *Server) withProvider(h func(*provider, http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := s.provider(r.PathValue("p"))
		if err != nil {
			writeJSON(w, http.StatusNotFound, adminError{Error: err.Error()})
			return
		}
		h(p, w, r)
	}
}

// provider returns the provider called name, opening it on first use. Its key is made without
// holding the sandbox's lock, since an RSA key takes a while and other providers keep serving.
func (s *Server) provider(name string) (*provider, error) {
	if !nameFormat.MatchString(name) {
		return nil, fmt.Errorf("%q is not a provider name: a letter, then up to 39 letters, digits, '-' or '_'", name)
	}
	s.mu.Lock()
	p, full := s.providers[name], len(s.providers) >= maxProviders
	s.mu.Unlock()
	if p != nil {
		return p, nil
	}
	if full {
		return nil, errors.New("the sandbox holds as many providers as it can; restart it")
	}
	fresh, err := newProvider(name, s.Issuer(name))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.providers[name]; p != nil { // another request opened it meanwhile
		return p, nil
	}
	s.providers[name] = fresh
	return fresh, nil
}

// showIndex is the sandbox's page for a person who opens its base URL in a browser.
func (s *Server) showIndex(w http.ResponseWriter, _ *http.Request) {
	renderPage(w, s.log, http.StatusOK, "index", struct{ Base string }{s.base})
}

// renderPage writes one of the sandbox's pages with a policy that allows nothing but the page's
// own styles. It sets no form-action: browsers check it against every redirect that follows the
// form's post, and the relying party's redirect URI may itself redirect anywhere.
func renderPage(w http.ResponseWriter, log *slog.Logger, status int, name string, data any) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		log.Error("idp sandbox: rendering a page", "page", name, "err", err)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away; nothing to tell it
}
