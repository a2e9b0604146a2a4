package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// PspxEvent is what routing a pspx event needs of its body; the rest stays in the raw bytes.
type PspxEvent struct {
	ID       string
	Type     string
	Livemode bool
	Object   json.RawMessage // data.object as sent
	// Customer is the customer the object belongs to: its customer field (an id or an expanded
	// customer), or the object itself when it is a customer.
	Customer string
	// Host is the object's metadata.host ("" when absent): the deployment that created it.
	Host string
}

// ParsePspxEvent parses just enough of a body to route it: an object "event" with an id, a type
// and data.object.
func ParsePspxEvent(body []byte) (PspxEvent, error) {
	var raw struct {
		ID       string `json:"id"`
		Object   string `json:"object"`
		Type     string `json:"type"`
		Livemode bool   `json:"livemode"`
		Data     struct {
			Object json.RawMessage `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &raw); err != nil || raw.Object != "event" || !token(raw.ID, "evt_") || raw.Type == "" ||
		len(raw.Type) > 100 || len(raw.Data.Object) == 0 {
		return PspxEvent{}, ErrNotAnEvent
	}
	var obj struct {
		ID       string          `json:"id"`
		Object   string          `json:"object"`
		Customer json.RawMessage `json:"customer"`
		Metadata map[string]any  `json:"metadata"`
	}
	if err := json.Unmarshal(raw.Data.Object, &obj); err != nil || obj.ID == "" {
		return PspxEvent{}, ErrNotAnEvent
	}
	ev := PspxEvent{ID: raw.ID, Type: raw.Type, Livemode: raw.Livemode, Object: raw.Data.Object}
	if host, ok := obj.Metadata["host"].(string); ok {
		ev.Host = host
	}
	switch {
	case obj.Object == "customer":
		ev.Customer = obj.ID
	case len(obj.Customer) > 0:
		var id string
		if json.Unmarshal(obj.Customer, &id) != nil {
			var expanded struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(obj.Customer, &expanded) // null or garbage: no customer
			id = expanded.ID
		}
		ev.Customer = id
	}
	if ev.Customer != "" && !token(ev.Customer, "cus_") {
		return PspxEvent{}, ErrNotAnEvent
	}
	return ev, nil
}

// token reports whether s is a provider id with prefix: letters and digits, at most 255 bytes.
func token(s, prefix string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || rest == "" || len(s) > 255 {
		return false
	}
	for _, c := range rest {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// SignatureTolerance is how far a signature's timestamp may be from now, either way: a captured
// call cannot be replayed later, and clocks may differ a little.
const SignatureTolerance = 300 * time.Second

// VerifyPspxSignature checks a pspx-signature header, "t=<unix seconds>,v1=<hex>[,v1=<hex>...]"
// (other schemes are ignored), against the raw body: some v1 must be the HMAC-SHA256 of
// "<t>.<body>" under one of secrets, and t within SignatureTolerance of now. Every comparison
// takes constant time, and every failure answers alike.
func VerifyPspxSignature(header string, body []byte, secrets []string, now time.Time) error {
	if len(header) > 4096 {
		return ErrNotAnEvent
	}
	var (
		ts     string
		hashes [][]byte
	)
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrNotAnEvent
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if h, err := hex.DecodeString(v); err == nil && len(h) == sha256.Size {
				hashes = append(hashes, h)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(hashes) == 0 {
		return ErrNotAnEvent
	}
	if d := now.Sub(time.Unix(sec, 0)); d > SignatureTolerance || d < -SignatureTolerance {
		return ErrNotAnEvent
	}
	matched := false
	for _, secret := range secrets {
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts))
		mac.Write([]byte{'.'})
		mac.Write(body)
		want := mac.Sum(nil)
		for _, h := range hashes {
			// No early exit: the time taken does not tell which secret or signature matched.
			matched = hmac.Equal(want, h) || matched
		}
	}
	if !matched {
		return ErrNotAnEvent
	}
	return nil
}
