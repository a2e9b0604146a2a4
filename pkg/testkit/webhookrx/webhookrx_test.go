package webhookrx

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"testing"
)

// sign is the specification's example computation, done independently of Verify.
func sign(key []byte, id, timestamp, body string) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "." + body))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func TestTheReceiverRecordsEveryDeliveryAndVerifiesOnlyThoseSignedWithATrustedSecret(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	r := Start(t)
	r.Trust(secret)
	body := `{"type":"user.created","timestamp":"2026-11-28T00:00:00Z","data":{"userId":"u1"}}`
	for _, tc := range []struct {
		name, signature string
	}{
		{"signed with the secret", sign(key, "msg_1", "1700000000", body)},
		{"one of several signatures (a rotation)", "v1,bm9wZQ== " + sign(key, "msg_1", "1700000000", body)},
		{"signed with another key", sign([]byte("another key of thirty-two bytes!"), "msg_1", "1700000000", body)},
		{"signed over another timestamp", sign(key, "msg_1", "1700000001", body)},
	} {
		req, err := http.NewRequest(http.MethodPost, r.URL, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("webhook-id", "msg_1")
		req.Header.Set("webhook-timestamp", "1700000000")
		req.Header.Set("webhook-signature", tc.signature)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: answered %d", tc.name, res.StatusCode)
		}
	}
	got := r.Deliveries()
	want := []bool{true, true, false, false}
	if len(got) != len(want) {
		t.Fatalf("recorded %d deliveries, want %d", len(got), len(want))
	}
	for i, d := range got {
		if d.Verified != want[i] || d.Type != "user.created" || string(d.Data) != `{"userId":"u1"}` || d.ID != "msg_1" {
			t.Errorf("delivery %d = %+v, want verified %v", i, d, want[i])
		}
	}
}
