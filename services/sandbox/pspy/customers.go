package pspy

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/berthhq/berth/services/sandbox/idempotency"
)

type customer struct {
	id        string
	key       string // the account
	mode      string
	name      string
	email     string
	metadata  json.RawMessage
	createdAt time.Time
	mandates  []*mandate // oldest first
}

func (s *Server) createCustomer(c call) idempotency.Answer {
	var in struct {
		Name     string          `json:"name"`
		Email    string          `json:"email"`
		Metadata json.RawMessage `json:"metadata"`
	}
	if a := decode(c.body, &in); a != nil {
		return *a
	}
	if in.Email != "" && !validEmail(in.Email) {
		return (&fieldError{"email", "The email address is invalid."}).answer()
	}
	meta, ferr := metadata(in.Metadata)
	if ferr != nil {
		return ferr.answer()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cu := &customer{
		id: newID("cst_"), key: c.key, mode: c.mode, name: in.Name, email: in.Email,
		metadata: meta, createdAt: s.clock.Now(),
	}
	s.customers[cu.id] = cu
	return resource(http.StatusCreated, s.customerOut(cu))
}

func (s *Server) getCustomer(c call) idempotency.Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	cu, miss := s.customer(c, c.r.PathValue("id"))
	if miss != nil {
		return *miss
	}
	return resource(http.StatusOK, s.customerOut(cu))
}

// customer finds an account's customer; another account's is as absent as an unknown one.
// The caller holds s.mu.
func (s *Server) customer(c call, id string) (*customer, *idempotency.Answer) {
	cu, ok := s.customers[id]
	if !ok || cu.key != c.key {
		a := problem(http.StatusNotFound, "No customer exists with token "+id+".", "")
		return nil, &a
	}
	return cu, nil
}

func (s *Server) customerOut(cu *customer) any {
	path := "/v2/customers/" + cu.id
	return struct {
		Resource  string           `json:"resource"`
		ID        string           `json:"id"`
		Mode      string           `json:"mode"`
		Name      *string          `json:"name"`
		Email     *string          `json:"email"`
		Locale    *string          `json:"locale"`
		Metadata  json.RawMessage  `json:"metadata"`
		CreatedAt string           `json:"createdAt"`
		Links     map[string]*link `json:"_links"`
	}{
		Resource: "customer", ID: cu.id, Mode: cu.mode, Name: nullable(cu.name), Email: nullable(cu.email),
		Metadata: nullRaw(cu.metadata), CreatedAt: stamp(cu.createdAt),
		Links: map[string]*link{
			"self":          s.self(path),
			"mandates":      s.self(path + "/mandates"),
			"documentation": docs(),
		},
	}
}

// nullable renders "" as the provider's null.
func nullable(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// nullRaw renders absent metadata as null.
func nullRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}

// validEmail is the provider's loose check: something on both sides of the last @, no spaces.
func validEmail(e string) bool {
	at := strings.LastIndex(e, "@")
	return at > 0 && at < len(e)-1 && !strings.ContainsAny(e, " \t\r\n")
}
