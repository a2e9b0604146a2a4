package webhookrx

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Delivery is one request the receiver got.
type Delivery struct {
	ID        string // webhook-id: the same on every attempt of one delivery
	Timestamp string // webhook-timestamp
	Signature string // webhook-signature
	Body      []byte
	// Type and Data are the body's type and data; Verified says whether a secret of the receiver
	// verifies the signature.
	Type     string
	Data     json.RawMessage
	Verified bool
}

// Receiver records deliveries. It is safe for concurrent use.
type Receiver struct {
	URL string

	mu         sync.Mutex
	secrets    []string
	deliveries []Delivery
}

// Start starts a receiver that lives as long as tb.
func Start(tb testing.TB) *Receiver {
	tb.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	tb.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Trust adds a secret (whsec_…) that verifies deliveries from now on.
func (r *Receiver) Trust(secret string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secrets = append(r.secrets, secret)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	d := Delivery{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
		Signature: req.Header.Get("webhook-signature"), Body: body}
	var env struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if json.Unmarshal(body, &env) == nil {
		d.Type, d.Data = env.Type, env.Data
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.secrets {
		d.Verified = d.Verified || Verify(s, d.ID, d.Timestamp, body, d.Signature)
	}
	r.deliveries = append(r.deliveries, d)
}

// Deliveries are the requests received so far, oldest first.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

// Verify checks a delivery as a receiver following the Standard Webhooks specification does: one
// of the space-separated signatures is v1 and the base64 HMAC-SHA256, under the secret's key, of
// "id.timestamp.body".
func Verify(secret, id, timestamp string, body []byte, header string) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, sig := range strings.Fields(header) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}
