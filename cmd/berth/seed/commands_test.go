package seed

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// demo has values as long as a real run's: keys of 103 characters, a 64-character state.
func demo() Demo {
	key := "berth_" + strings.Repeat("a", 32) + "_" + strings.Repeat("b", 64)
	d := Demo{BaseURL: "http://127.0.0.1:8080", AppID: "61f56ae4-2db1-41f6-8a07-3b160e7d72a0", ReadKey: key, WriteKey: key + "w",
		TenantID: "8c58e2fc-46cc-4b6b-b07d-45f9d0c0458a", UserIDs: []string{"a7eb6594-6804-4b34-b41c-428206a08718"},
		PromotionCode: "WELCOME30", State: DemoState}
	d.Pspx.Prices.Monthly, d.Pspx.TaxRate = "price_1XEZCchudyx9NGjswztNlwkr", "txr_qzQG0VQWfmK1zR1eLLJDi9AW"
	return d
}

// sh runs script and answers what it printed; a curl function prints its arguments, one a line.
func sh(t *testing.T, script string) string {
	t.Helper()
	out, err := exec.Command("sh", "-c", `curl() { for a; do printf '%s\n' "$a"; done; }`+"\n"+script).Output()
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, script)
	}
	return string(out)
}

func TestEveryPrintedLineFitsTheWidth(t *testing.T) {
	d := demo()
	lines := d.Exports()
	for _, c := range append(d.Curls(), d.CheckoutCurl(), d.ClockCurl()) {
		lines = append(lines, c...)
	}
	for _, l := range lines {
		if len(l) > Width {
			t.Errorf("%d columns: %q", len(l), l)
		}
	}
}

func TestTheExportsSetTheDemosValuesInAShell(t *testing.T) {
	d := demo()
	got := sh(t, strings.Join(d.Exports(), "\n")+"\n"+`printf '%s\n' "$BERTH_URL" "$BERTH_APP" "$BERTH_READ_KEY" "$BERTH_WRITE_KEY" "$BERTH_TENANT" "$BERTH_USER" "$BERTH_STATE"`)
	want := strings.Join([]string{d.BaseURL, d.AppID, d.ReadKey, d.WriteKey, d.TenantID, d.UserIDs[0], d.State}, "\n") + "\n"
	if got != want {
		t.Fatalf("the shell has\n%s\nwant\n%s", got, want)
	}
}

func TestTheCommandsSendWhatTheRouteNeeds(t *testing.T) {
	d := demo()
	exports := strings.Join(d.Exports(), "\n") + "\n"
	for _, c := range []struct {
		name    string
		command []string
		want    []string // arguments curl receives, in order
	}{
		{"a read", d.Curls()[0], []string{"-s", "-H", "X-API-KEY: " + d.ReadKey, "-H", "X-API-KEY-TYPE: read", "-H", "X-CLIENT-ID: " + d.AppID,
			d.BaseURL + "/v1/tenants/" + d.TenantID}},
		{"a write with a body", d.Curls()[5], []string{"-s", "-X", "PUT", "-H", "X-API-KEY: " + d.WriteKey, "-H", "X-API-KEY-TYPE: write",
			"-H", "X-CLIENT-ID: " + d.AppID, "-H", "Content-Type: application/json", "-d", `{"user":{"nickname":"ada"}}`, d.BaseURL + "/v1/users/" + d.UserIDs[0]}},
		{"the clock", d.ClockCurl(), []string{"-s", "-X", "POST", "-d", `{"seconds":2678400}`, d.BaseURL + "/_sandbox/clock/advance"}},
	} {
		got := sh(t, exports+strings.Join(c.command, "\n"))
		if want := strings.Join(c.want, "\n") + "\n"; got != want {
			t.Errorf("%s: curl receives\n%s\nwant\n%s", c.name, got, want)
		}
	}
}

func TestTheCheckoutBodyIsOneJSONWordAcrossItsLines(t *testing.T) {
	d := demo()
	args := strings.Split(sh(t, strings.Join(d.Exports(), "\n")+"\n"+strings.Join(d.CheckoutCurl(), "\n")), "\n")
	var body map[string]any
	for i, a := range args {
		if a == "-d" && i+1 < len(args) {
			if err := json.Unmarshal([]byte(args[i+1]), &body); err != nil {
				t.Fatalf("the body %q is not JSON: %v", args[i+1], err)
			}
		}
	}
	if body["price"] != d.Pspx.Prices.Monthly || body["taxRate"] != d.Pspx.TaxRate || body["state"] != d.State || body["mode"] != "subscription" {
		t.Fatalf("body = %v", body)
	}
	if last := args[len(args)-2]; last != d.BaseURL+"/v1/tenants/"+d.TenantID+"/checkout-sessions" {
		t.Fatalf("the URL is %q", last)
	}
}

func TestTheDemoStateIs64RandomLettersAndDigits(t *testing.T) {
	if len(DemoState) != 64 || strings.Trim(DemoState, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != "" {
		t.Fatalf("DemoState = %q", DemoState)
	}
	if randomAlnum(64) == DemoState {
		t.Fatal("the state is not random")
	}
}
