package idp

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of a client registration: beyond them a value is a mistake, not a test.
const (
	maxClients      = 100
	maxRedirectURIs = 16
	maxURILength    = 2000
)

var (
	clientIDFormat     = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	clientSecretFormat = regexp.MustCompile(`^[\x21-\x7e]{16,128}$`)
)

// Client is a relying party registered at a provider. The secret is only ever answered by the
// registration itself.
type Client struct {
	ClientID     string   `json:"clientId"`
	ClientSecret string   `json:"clientSecret,omitempty"`
	RedirectURIs []string `json:"redirectUris"`
}

// client is a registered client as the provider keeps it: the secret only as its hash.
type client struct {
	id           string
	secretHash   [sha256.Size]byte
	redirectURIs []string
}

// FieldError is a registration or fault set refused, naming the field at fault.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// adminError is the JSON body of a refused control request.
type adminError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func fieldError(err error) adminError {
	var fe *FieldError
	if errors.As(err, &fe) {
		return adminError{fe.Message, fe.Field}
	}
	return adminError{Error: err.Error()}
}

// RegisterClient registers c at the provider called provider (opening it if need be), replacing
// a client of the same id. An empty ClientID or ClientSecret is generated. It answers the client
// with its secret; a *FieldError says what is wrong with a refused one.
func (s *Server) RegisterClient(provider string, c Client) (Client, error) {
	p, err := s.provider(provider)
	if err != nil {
		return Client{}, err
	}
	out, _, err := p.register(c)
	return out, err
}

func (p *provider) register(c Client) (Client, bool, error) {
	if c.ClientID == "" {
		c.ClientID = "client_" + strings.ToLower(rand.Text())
	}
	if c.ClientSecret == "" {
		c.ClientSecret = rand.Text() + rand.Text()
	}
	switch {
	case !clientIDFormat.MatchString(c.ClientID):
		return Client{}, false, &FieldError{"clientId", "clientId must be 1 to 64 letters, digits, '.', '_' or '-'"}
	case !clientSecretFormat.MatchString(c.ClientSecret):
		return Client{}, false, &FieldError{"clientSecret", "clientSecret must be 16 to 128 printable ASCII characters without spaces"}
	case len(c.RedirectURIs) == 0 || len(c.RedirectURIs) > maxRedirectURIs:
		return Client{}, false, &FieldError{"redirectUris", "redirectUris must list 1 to " + strconv.Itoa(maxRedirectURIs) + " URIs"}
	}
	for i, u := range c.RedirectURIs {
		if msg := checkRedirectURI(u); msg != "" {
			return Client{}, false, &FieldError{"redirectUris[" + strconv.Itoa(i) + "]", msg}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.clients[c.ClientID]
	if old == nil && len(p.clients) >= maxClients {
		return Client{}, false, &FieldError{"clientId", "the provider has " + strconv.Itoa(maxClients) + " clients already; delete one or use another provider"}
	}
	p.clients[c.ClientID] = &client{id: c.ClientID, secretHash: sha256.Sum256([]byte(c.ClientSecret)), redirectURIs: slices.Clone(c.RedirectURIs)}
	return c, old == nil, nil
}

// checkRedirectURI says what is wrong with a redirect URI to register, or "". The URI must be an
// absolute http(s) URL without a fragment (RFC 6749 3.1.2).
func checkRedirectURI(raw string) string {
	if len(raw) > maxURILength || !utf8.ValidString(raw) || strings.ContainsFunc(raw, isControl) {
		return "a redirect URI must be at most 2000 characters of valid UTF-8 without control characters"
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "a redirect URI must be an absolute http or https URL"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "a redirect URI must not have a fragment"
	}
	return ""
}

func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }

// registerClient serves POST /{p}/clients, a Client as JSON: 201 with the client and its secret,
// or 200 when it replaced a client of the same id.
func (s *Server) registerClient(p *provider, w http.ResponseWriter, r *http.Request) {
	var c Client
	if ferr := decodeJSON(w, r, &c, "clientId, clientSecret and redirectUris", false); ferr != nil {
		writeJSON(w, http.StatusBadRequest, ferr)
		return
	}
	out, created, err := p.register(c)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, fieldError(err))
		return
	}
	s.log.Info("idp sandbox: client registered", "provider", p.name, "client", out.ClientID, "redirectUris", out.RedirectURIs)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, out)
}

// getClient serves GET /{p}/clients/{id}: the client without its secret.
func (s *Server) getClient(p *provider, w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	c := p.clients[r.PathValue("id")]
	var out Client
	if c != nil {
		out = Client{ClientID: c.id, RedirectURIs: slices.Clone(c.redirectURIs)}
	}
	p.mu.Unlock()
	if c == nil {
		writeJSON(w, http.StatusNotFound, adminError{Error: "no such client"})
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// deleteClient serves DELETE /{p}/clients/{id}: the client, its codes and its tokens are gone.
func (s *Server) deleteClient(p *provider, w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	p.mu.Lock()
	_, ok := p.clients[id]
	delete(p.clients, id)
	for _, grants := range []map[string]*grant{p.codes, p.tokens} {
		for k, g := range grants {
			if g.client == id {
				delete(grants, k)
			}
		}
	}
	p.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, adminError{Error: "no such client"})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// decodeJSON reads a control request's body strictly into v: an unknown field or a value of the
// wrong type is refused with its name rather than ignored, so a typo never looks like a setting
// in force. fields lists the known ones for the message; emptyOK accepts an empty body as {}.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any, fields string, emptyOK bool) *adminError {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<10))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("trailing data")
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF) && emptyOK:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return &adminError{typeErr.Field + " has a value of the wrong type (" + typeErr.Value + ")", typeErr.Field}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return &adminError{"unknown field " + strconv.Quote(field) + "; the fields are " + fields, field}
	case errors.Is(err, io.EOF):
		return &adminError{Error: "the body must be a JSON object with " + fields}
	}
	return &adminError{Error: "the body is not a JSON object: " + err.Error()}
}
