package contract

import (
	"strings"
	"testing"
)

// Route 18 and route 23 take `language` by one rule: en and de themselves, the country codes AT,
// CH, DE and LI as de, any other ISO 3166-1 country code as en (the REST wrapper sends country
// codes in upper case), anything else 400 naming the field.
func TestLanguageIsOneRuleOnRoutes18And23(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			id := e.demo.UserIDs[0]
			cases := []struct{ sent, stored string }{
				{"AT", "de"}, {"ch", "de"}, {"Li", "de"}, {"DE", "de"}, {"US", "en"}, {"fr", "en"}, {"EN", "en"}, {"de", "de"},
			}
			for _, c := range cases {
				e.do("PUT", "/v1/users/"+id, e.write(), `{"user":{"language":"`+c.sent+`"}}`).ok(t, 200)
				if u := e.do("GET", "/v1/users/"+id, e.read(), "").ok(t, 200).(map[string]any); u["language"] != c.stored {
					t.Fatalf("route 18 with language %q stored %v, want %q", c.sent, u["language"], c.stored)
				}
			}
			for _, sent := range []string{"AT", "us", "En"} {
				e.do("POST", "/v1/users/"+id+"/referral-invites", e.write(), `{"email":"friend@example.com","language":"`+sent+`"}`).ok(t, 201)
			}
			for _, sent := range []string{"xx", "de-AT", "DEU", "german"} {
				for _, c := range []struct{ method, path, body string }{
					{"PUT", "/v1/users/" + id, `{"user":{"language":"` + sent + `"}}`},
					{"POST", "/v1/users/" + id + "/referral-invites", `{"email":"friend@example.com","language":"` + sent + `"}`},
				} {
					r := e.do(c.method, c.path, e.write(), c.body)
					r.fails(t, 400)
					if msg := r.body.(map[string]any)["error"].(string); !strings.Contains(msg, "language") {
						t.Fatalf("%s %s with language %q: error %q does not name the field", c.method, c.path, sent, msg)
					}
				}
			}
		})
	}
}
