package contract

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// A German invite of a branded app arrives in German under the app's display name, with a text and
// an HTML part and a link to the deployment's own sign-up page in German; the development
// mailbox's JSON view keeps its shape (tests and tools read it). On memory and on Postgres, where
// the branding lives in the apps table.
func TestAGermanInviteIsAGermanMailInTheAppsBrandingAndTheMailboxKeepsItsShape(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := e.admin.Identity.SetAppBranding(ctx, &identityv1.SetAppBrandingRequest{AppId: e.demo.AppID,
				Branding: &identityv1.AppBranding{DisplayName: "Werft", AccentColor: "#0a7f3e", DefaultLanguage: "en"}}); err != nil {
				t.Fatal(err)
			}
			id := e.demo.UserIDs[0]
			e.do("PUT", "/v1/users/"+id, e.write(), `{"user":{"language":"DE"}}`).ok(t, 200)
			e.do("POST", "/v1/users/"+id+"/referral-invites", e.write(), `{"email":"freundin@example.com","language":"AT"}`).ok(t, 201)

			res, err := http.Get(e.stack.BaseURL + "/dev/mailbox?format=json")
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var msgs []map[string]any
			if err := json.Unmarshal(raw, &msgs); err != nil {
				t.Fatalf("mailbox JSON = %s (%v)", raw, err)
			}
			// The newest mail is the invite; the seed's console invitation came before it.
			if len(msgs) == 0 {
				t.Fatalf("mailbox JSON = %s, want the invite", raw)
			}
			m := msgs[0]
			if keys := slices.Sorted(maps.Keys(m)); !slices.Equal(keys, []string{"html", "receivedAt", "subject", "text", "to"}) {
				t.Errorf("a message's fields = %v", keys)
			}
			text, _ := m["text"].(string)
			html, _ := m["html"].(string)
			if m["to"] != "freundin@example.com" || m["subject"] != "Deine Einladung zu Werft" ||
				!strings.HasPrefix(text, "Hallo,\n\ndu bist eingeladen, Werft beizutreten.") || !strings.Contains(html, `<html lang="de">`) {
				t.Errorf("message = %v", m)
			}
			link, err := url.Parse(regexp.MustCompile(`https?://\S+`).FindString(text))
			if err != nil || link.Scheme+"://"+link.Host != e.stack.BaseURL || link.Path != "/login" || link.Query().Get("language") != "de" {
				t.Errorf("the invite links to %v, want the deployment's sign-up page in German", link)
			}
		})
	}
}
