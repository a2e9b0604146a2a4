package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"
)

func sign(secret string, t int64, body string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(fmt.Appendf(nil, "%d.%s", t, body))
	return hex.EncodeToString(mac.Sum(nil))
}

func TestPspxSignatureCases(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	body := `{"id":"evt_1","object":"event"}`
	ts := now.Unix()
	const testSecret, rolled, liveSecret = "whsec_test", "whsec_rolled", "whsec_live"
	testSecrets := []string{testSecret}
	cases := []struct {
		name    string
		header  string
		body    string
		secrets []string
		ok      bool
	}{
		{"valid", fmt.Sprintf("t=%d,v1=%s", ts, sign(testSecret, ts, body)), body, testSecrets, true},
		{"one of several v1 matches (a secret being rolled)", fmt.Sprintf("t=%d,v1=%s,v1=%s", ts, sign(rolled, ts, body), sign(testSecret, ts, body)), body, testSecrets, true},
		{"the connection holds old and new secrets", fmt.Sprintf("t=%d,v1=%s", ts, sign(rolled, ts, body)), body, []string{rolled, testSecret}, true},
		{"other schemes are ignored", fmt.Sprintf("t=%d,v0=abc,v1=%s", ts, sign(testSecret, ts, body)), body, testSecrets, true},
		{"just inside the tolerance", fmt.Sprintf("t=%d,v1=%s", ts-300, sign(testSecret, ts-300, body)), body, testSecrets, true},
		{"stale", fmt.Sprintf("t=%d,v1=%s", ts-301, sign(testSecret, ts-301, body)), body, testSecrets, false},
		{"future", fmt.Sprintf("t=%d,v1=%s", ts+301, sign(testSecret, ts+301, body)), body, testSecrets, false},
		{"tampered body", fmt.Sprintf("t=%d,v1=%s", ts, sign(testSecret, ts, body)), body + " ", testSecrets, false},
		{"timestamp changed", fmt.Sprintf("t=%d,v1=%s", ts+1, sign(testSecret, ts, body)), body, testSecrets, false},
		{"missing header", "", body, testSecrets, false},
		{"no v1", fmt.Sprintf("t=%d", ts), body, testSecrets, false},
		{"no timestamp", "v1=" + sign(testSecret, ts, body), body, testSecrets, false},
		{"malformed pair", fmt.Sprintf("t=%d,v1", ts), body, testSecrets, false},
		{"v1 not hex", fmt.Sprintf("t=%d,v1=zz", ts), body, testSecrets, false},
		{"live secret for a test event", fmt.Sprintf("t=%d,v1=%s", ts, sign(liveSecret, ts, body)), body, testSecrets, false},
		{"no secrets", fmt.Sprintf("t=%d,v1=%s", ts, sign(testSecret, ts, body)), body, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := VerifyPspxSignature(tc.header, []byte(tc.body), tc.secrets, now)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrNotAnEvent) {
				t.Fatalf("err = %v, want ErrNotAnEvent", err)
			}
		})
	}
}

func TestParsePspxEventRoutesByCustomerAndHost(t *testing.T) {
	cases := []struct {
		name           string
		body           string
		customer, host string
		ok             bool
	}{
		{"an invoice", `{"id":"evt_1","object":"event","type":"invoice.paid","livemode":false,"data":{"object":{"id":"in_1","object":"invoice","customer":"cus_1","metadata":{"host":"berth.test"}}}}`, "cus_1", "berth.test", true},
		{"an expanded customer", `{"id":"evt_1","object":"event","type":"x","data":{"object":{"id":"in_1","customer":{"id":"cus_2"}}}}`, "cus_2", "", true},
		{"a customer", `{"id":"evt_1","object":"event","type":"customer.updated","data":{"object":{"id":"cus_3","object":"customer"}}}`, "cus_3", "", true},
		{"no customer", `{"id":"evt_1","object":"event","type":"price.created","data":{"object":{"id":"price_1","object":"price","customer":null}}}`, "", "", true},
		{"not json", `{"id":`, "", "", false},
		{"not an event", `{"id":"evt_1","object":"invoice","type":"x","data":{"object":{"id":"in_1"}}}`, "", "", false},
		{"no type", `{"id":"evt_1","object":"event","data":{"object":{"id":"in_1"}}}`, "", "", false},
		{"no object", `{"id":"evt_1","object":"event","type":"x","data":{}}`, "", "", false},
		{"a bad event id", `{"id":"evt 1","object":"event","type":"x","data":{"object":{"id":"in_1"}}}`, "", "", false},
		{"a bad customer id", `{"id":"evt_1","object":"event","type":"x","data":{"object":{"id":"in_1","customer":"cus_\u0000"}}}`, "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := ParsePspxEvent([]byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if err == nil && (ev.Customer != tc.customer || ev.Host != tc.host) {
				t.Fatalf("customer %q host %q, want %q %q", ev.Customer, ev.Host, tc.customer, tc.host)
			}
		})
	}
}

func TestParsePspyPaymentIDFromFormOrJSON(t *testing.T) {
	cases := []struct {
		name, contentType, body, id string
		ok                          bool
	}{
		{"form", "application/x-www-form-urlencoded", "id=tr_abc123", "tr_abc123", true},
		{"form without a content type", "", "id=tr_abc123", "tr_abc123", true},
		{"json", "application/json; charset=utf-8", `{"id":"tr_abc123"}`, "tr_abc123", true},
		{"missing", "application/x-www-form-urlencoded", "", "", false},
		{"not a payment id", "application/x-www-form-urlencoded", "id=cst_1", "", false},
		{"json without id", "application/json", `{}`, "", false},
		{"broken json", "application/json", `{"id":`, "", false},
		{"broken form", "application/x-www-form-urlencoded", "id=%zz", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, ok := ParsePspyPaymentID(tc.contentType, []byte(tc.body))
			if ok != tc.ok || id != tc.id {
				t.Fatalf("= %q, %v; want %q, %v", id, ok, tc.id, tc.ok)
			}
		})
	}
}
