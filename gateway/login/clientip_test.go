package login

import (
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClientIPBelievesForwardedForOnlyFromTrustedProxies(t *testing.T) {
	trusted, err := ParseProxies("10.0.0.0/8, 192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer, xff, want string
	}{
		{"direct client, header ignored", "203.0.113.9:5000", "198.51.100.1", "203.0.113.9"},
		{"one trusted proxy", "10.1.2.3:5000", "198.51.100.1", "198.51.100.1"},
		{"spoofed entries left of the real client", "10.1.2.3:5000", "6.6.6.6, 198.51.100.1", "198.51.100.1"},
		{"chain of trusted proxies", "10.1.2.3:5000", "198.51.100.1, 192.0.2.7, 10.9.9.9", "198.51.100.1"},
		{"trusted proxy without header", "10.1.2.3:5000", "", "10.1.2.3"},
		{"malformed hop stops the walk", "10.1.2.3:5000", "198.51.100.1, garbage", "10.1.2.3"},
		{"IPv6 peer", "[2001:db8::1]:5000", "198.51.100.1", "2001:db8::1"},
		{"IPv4-mapped trusted peer", "[::ffff:10.1.2.3]:5000", "198.51.100.1", "198.51.100.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/login", nil)
			r.RemoteAddr = tc.peer
			if tc.xff != "" {
				r.Header.Set("X-Forwarded-For", tc.xff)
			}
			if got := ClientIP(r, trusted); got != tc.want {
				t.Fatalf("clientIP = %q, want %q", got, tc.want)
			}
			if got := ClientIP(r, nil); tc.xff != "" && got == tc.xff {
				t.Fatal("X-Forwarded-For believed without trusted proxies")
			}
		})
	}
}

func TestParseProxiesRejectsGarbage(t *testing.T) {
	if _, err := ParseProxies("10.0.0.0/8, not-an-ip"); err == nil {
		t.Fatal("accepted a malformed proxy")
	}
	if p, err := ParseProxies(""); err != nil || len(p) != 0 {
		t.Fatalf("empty list = %v, %v", p, err)
	}
}

func TestUserAgentIsKeptAsSentDroppedWhenNotTextAndCutOnACharacter(t *testing.T) {
	long := strings.Repeat("a", maxUserAgent-1) + "é" // the é straddles the limit
	cases := []struct{ name, header, want string }{
		{"a browser's header", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"},
		{"surrounding spaces trimmed", "  curl/8.5  ", "curl/8.5"},
		{"none sent", "", ""},
		{"a control character drops it", "Mozilla\x01/5.0", ""},
		{"invalid UTF-8 drops it", "Mozilla/5.0 \xff", ""},
		{"too long: cut before the character that crosses the limit", long, strings.Repeat("a", maxUserAgent-1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/login", nil)
			r.Header.Set("User-Agent", tc.header)
			got := UserAgent(r)
			if got != tc.want {
				t.Fatalf("userAgent = %q, want %q", got, tc.want)
			}
			if len(got) > maxUserAgent || !utf8.ValidString(got) {
				t.Fatalf("userAgent = %q: over the limit or not UTF-8", got)
			}
		})
	}
}
