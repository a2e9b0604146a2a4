package pspy

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/berthhq/berth/services/sandbox/idempotency"
)

type mandate struct {
	id         string
	mode       string
	customerID string
	holder     string // the customer's name when the mandate was signed
	method     string // "creditcard" or "directdebit"
	status     string // "valid", or "invalid" once revoked
	// failRecurring makes every recurring charge of the mandate fail: the checkout page's
	// "paid, later recurring payments fail" outcome.
	failRecurring bool
	createdAt     time.Time
}

// newMandate records the mandate a paid first payment establishes. The caller holds s.mu.
func (s *Server) newMandate(cu *customer, method string, failRecurring bool, at time.Time) *mandate {
	md := &mandate{
		id: newID("mdt_"), mode: cu.mode, customerID: cu.id, holder: cu.name, method: method,
		status: "valid", failRecurring: failRecurring, createdAt: at,
	}
	cu.mandates = append(cu.mandates, md)
	s.mandates[md.id] = md
	return md
}

func newestValidMandate(cu *customer) *mandate {
	for _, md := range slices.Backward(cu.mandates) {
		if md.status == "valid" {
			return md
		}
	}
	return nil
}

// listMandates is the provider's list: newest first, limit (1 to 250, 50 by default) per page,
// from naming the first mandate of the page, with previous and next links.
func (s *Server) listMandates(c call) idempotency.Answer {
	q := c.r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 250 {
			return problem(http.StatusBadRequest, "The limit must be a number from 1 to 250.", "limit")
		}
		limit = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cu, miss := s.customer(c, c.r.PathValue("id"))
	if miss != nil {
		return *miss
	}
	newest := slices.Clone(cu.mandates)
	slices.Reverse(newest)
	start := 0
	if from := q.Get("from"); from != "" {
		start = slices.IndexFunc(newest, func(md *mandate) bool { return md.id == from })
		if start < 0 {
			return problem(http.StatusBadRequest, "The mandate "+from+" given in from is not one of this customer's.", "from")
		}
	}
	page := newest[start:min(start+limit, len(newest))]
	path := "/v2/customers/" + cu.id + "/mandates"
	pageLink := func(i int) *link {
		return s.self(path + "?" + url.Values{"from": {newest[i].id}, "limit": {strconv.Itoa(limit)}}.Encode())
	}
	self := path
	if c.r.URL.RawQuery != "" {
		self += "?" + c.r.URL.RawQuery
	}
	links := map[string]*link{"self": s.self(self), "previous": nil, "next": nil, "documentation": docs()}
	if start > 0 {
		links["previous"] = pageLink(max(0, start-limit))
	}
	if end := start + len(page); end < len(newest) {
		links["next"] = pageLink(end)
	}
	items := make([]any, 0, len(page))
	for _, md := range page {
		items = append(items, s.mandateOut(md))
	}
	return resource(http.StatusOK, struct {
		Count    int              `json:"count"`
		Embedded map[string][]any `json:"_embedded"`
		Links    map[string]*link `json:"_links"`
	}{len(items), map[string][]any{"mandates": items}, links})
}

// revokeMandate makes a mandate invalid: no payment can charge it any more.
func (s *Server) revokeMandate(c call) idempotency.Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	cu, miss := s.customer(c, c.r.PathValue("id"))
	if miss != nil {
		return *miss
	}
	id := c.r.PathValue("mandateId")
	md, ok := s.mandates[id]
	if !ok || md.customerID != cu.id {
		return problem(http.StatusNotFound, "No mandate exists with token "+id+".", "")
	}
	md.status = "invalid"
	return idempotency.Answer{Status: http.StatusNoContent}
}

func (s *Server) mandateOut(md *mandate) any {
	var details map[string]any
	switch md.method {
	case "creditcard":
		details = map[string]any{
			"cardHolder": md.holder, "cardNumber": "6787", "cardLabel": "Mastercard",
			"cardFingerprint": "sandbox" + md.id[4:], "cardExpiryDate": md.createdAt.AddDate(3, 0, 0).Format("2006-01-02"),
		}
	case "directdebit":
		details = map[string]any{"consumerName": md.holder, "consumerAccount": "NL55INGB0000000000", "consumerBic": "INGBNL2A"}
	}
	return struct {
		Resource      string           `json:"resource"`
		ID            string           `json:"id"`
		Mode          string           `json:"mode"`
		Status        string           `json:"status"`
		Method        string           `json:"method"`
		Details       map[string]any   `json:"details"`
		SignatureDate string           `json:"signatureDate"`
		CreatedAt     string           `json:"createdAt"`
		Links         map[string]*link `json:"_links"`
	}{
		Resource: "mandate", ID: md.id, Mode: md.mode, Status: md.status, Method: md.method, Details: details,
		SignatureDate: md.createdAt.Format("2006-01-02"), CreatedAt: stamp(md.createdAt),
		Links: map[string]*link{
			"self":          s.self("/v2/customers/" + md.customerID + "/mandates/" + md.id),
			"customer":      s.self("/v2/customers/" + md.customerID),
			"documentation": docs(),
		},
	}
}
