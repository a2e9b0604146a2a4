package contract

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/mail"
)

// Route 18 with the user's own token is no oracle of registered addresses: a free and a taken new
// email get the same status and body, and neither changes the user until the new address confirms
// through the link mailed to it (the taken one's owner is told instead). A write key still
// changes the address at once.
func TestRoute18WithATokenAnswersAlikeForAFreeAndATakenAddressAndChangesOnlyOnConfirmation(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			e.newUser(t, "owner@example.com")
			tk := e.newUser(t, "changer@example.com")
			own := bearer(tk.access)
			me := func() map[string]any { return e.do("GET", "/v1/users/me", own, "").ok(t, 200).(map[string]any) }
			userID := me()["id"].(string)

			free := e.do("PUT", "/v1/users/"+userID, own, `{"user":{"email":"fresh@example.com"}}`)
			taken := e.do("PUT", "/v1/users/"+userID, own, `{"user":{"email":"owner@example.com"}}`)
			free.ok(t, 200)
			if free.status != taken.status || free.raw != taken.raw {
				t.Fatalf("a free address answered %d %s, a taken one %d %s", free.status, free.raw, taken.status, taken.raw)
			}
			if u := me(); u["email"] != "changer@example.com" {
				t.Fatalf("the address changed before any confirmation: %v", u["email"])
			}

			notice := lastMailTo(t, e.stack.Mailbox, "owner@example.com")
			if !strings.Contains(notice.Subject, "Someone tried to use your email address") || strings.Contains(notice.Text, "/email-change") {
				t.Errorf("the owner's notice: %q %q", notice.Subject, notice.Text)
			}
			link := regexp.MustCompile(`https?://\S+/email-change\?token=\S+`).FindString(lastMailTo(t, e.stack.Mailbox, "fresh@example.com").Text)
			if !strings.HasPrefix(link, e.stack.BaseURL+"/email-change?") {
				t.Fatalf("confirmation link %q is not on the deployment's public URL %s", link, e.stack.BaseURL)
			}

			e.confirmEmailChange(t, link)
			if u := me(); u["email"] != "fresh@example.com" || u["email_verified"] != true {
				t.Fatalf("after confirmation: email %v verified %v", u["email"], u["email_verified"])
			}
			if told := lastMailTo(t, e.stack.Mailbox, "changer@example.com"); !strings.Contains(told.Subject, "was changed") {
				t.Errorf("the old address was not told: %q", told.Subject)
			}

			e.do("PUT", "/v1/users/"+userID, e.write(), `{"user":{"email":"server-set@example.com"}}`).ok(t, 200)
			if u := me(); u["email"] != "server-set@example.com" || u["email_verified"] != false {
				t.Fatalf("a write key's change: email %v verified %v, want applied at once and unverified", u["email"], u["email_verified"])
			}
		})
	}
}

// lastMailTo is the newest message the deployment sent to addr.
func lastMailTo(t *testing.T, box *mail.Mailbox, addr string) mail.Message {
	t.Helper()
	msgs := box.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].To == addr {
			return msgs[i]
		}
	}
	t.Fatalf("no mail to %s", addr)
	return mail.Message{}
}

// confirmEmailChange opens the confirmation link like a browser, checks that opening it shows a
// button, and presses it.
func (e *env) confirmEmailChange(t *testing.T, link string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	res, err := client.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	csrf, token := csrfField.FindSubmatch(page), regexp.MustCompile(`name="token" value="([^"]+)"`).FindSubmatch(page)
	if res.StatusCode != 200 || csrf == nil || token == nil || !strings.Contains(string(page), "Confirm") {
		t.Fatalf("confirmation page: %d %s", res.StatusCode, page)
	}
	res, err = client.PostForm(e.stack.BaseURL+"/email-change", url.Values{
		"csrf_token": {html.UnescapeString(string(csrf[1]))}, "token": {html.UnescapeString(string(token[1]))},
	})
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(page), "Email address confirmed") {
		t.Fatalf("confirming: %d %s", res.StatusCode, page)
	}
}
