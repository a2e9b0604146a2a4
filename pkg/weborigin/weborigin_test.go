package weborigin

import "testing"

func TestParseNormalisesCaseAndDefaultPorts(t *testing.T) {
	for raw, want := range map[string]string{
		"https://shop.example":        "https://shop.example",
		"HTTPS://Shop.Example":        "https://shop.example",
		"https://shop.example:443":    "https://shop.example",
		"http://shop.example:80":      "http://shop.example",
		"http://shop.example:443":     "http://shop.example:443",
		"https://shop.example:8443":   "https://shop.example:8443",
		"http://127.0.0.1:5173":       "http://127.0.0.1:5173",
		"http://[::1]:3000":           "http://[::1]:3000",
		"http://[::1]":                "http://[::1]",
		"https://xn--mnchen-3ya.test": "https://xn--mnchen-3ya.test",
	} {
		got, err := Parse(raw)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

func TestParseRefusesAnythingButAnOrigin(t *testing.T) {
	for _, raw := range []string{
		"", "null", "*", "shop.example", "//shop.example", "ftp://shop.example", "file:///tmp/x",
		"https://shop.example/", "https://shop.example/path", "https://shop.example?x=1",
		"https://shop.example#top", "https://user@shop.example", "https://user:pw@shop.example",
		"https://", "https://:443", "https://shop.example:", "https://shop.example:0",
		"https://shop.example:65536", "https://shop.example:08080", "https://shop..example",
		"https://-shop.example", "https://shop_example.test", "https://*.shop.example",
		"https://münchen.test", "https://shop.example\n", " https://shop.example",
		"javascript:alert(1)", "https:shop.example",
	} {
		if got, err := Parse(raw); err == nil {
			t.Errorf("Parse(%q) = %q, want an error", raw, got)
		}
	}
}

func TestOfTakesTheOriginOfARedirectURI(t *testing.T) {
	for raw, want := range map[string]string{
		"https://shop.example/callback?x=1": "https://shop.example",
		"HTTP://LOCALHOST:3000/cb":          "http://localhost:3000",
		"https://shop.example:443/":         "https://shop.example",
	} {
		if got, ok := Of(raw); !ok || got != want {
			t.Errorf("Of(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{"ftp://shop.example/x", "/relative", "https://u@shop.example/"} {
		if got, ok := Of(raw); ok {
			t.Errorf("Of(%q) = %q, want no origin", raw, got)
		}
	}
}

func TestAllowedComparesNormalisedOriginsExactly(t *testing.T) {
	allowed := []string{"https://shop.example", "http://127.0.0.1:5173"}
	for origin, want := range map[string]bool{
		"https://shop.example":       true,
		"https://SHOP.example:443":   true,
		"http://127.0.0.1:5173":      true,
		"http://shop.example":        false, // another scheme is another origin
		"https://shop.example:8443":  false,
		"https://evil.shop.example":  false,
		"https://shop.example.evil":  false,
		"http://127.0.0.1:5174":      false,
		"null":                       false,
		"":                           false,
		"https://shop.example/":      false,
		"https://shop.example\r\nX:": false,
	} {
		if got := Allowed(allowed, origin); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", origin, got, want)
		}
	}
}
