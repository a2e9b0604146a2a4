package mount_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/services/sandbox/mount"
)

func TestRegisterServesTheProvidersAndTheDeliveryControls(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	sb := mount.NewWithOptions("http://"+srv.Listener.Addr().String(), slog.New(slog.DiscardHandler), mount.Options{TimeScale: 0.0001})
	mux := http.NewServeMux()
	sb.Register(mux)
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(sb.Close)

	do := func(method, path, contentType, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer sk_test_mounttest1")
		if strings.HasPrefix(path, mount.PspyPath) {
			req.Header.Set("Authorization", "Bearer test_mounttest1")
		}
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return resp.StatusCode, out
	}
	if code, out := do("POST", mount.FaultsPath, "application/json", `{"provider": "pspy", "failFirst": 1}`); code != 200 || out["failFirst"] != 1.0 {
		t.Fatalf("faults: %d %v", code, out)
	}
	form := url.Values{"url": {"https://berth.example/hook"}, "enabled_events[]": {"*"}}.Encode()
	code, ep := do("POST", mount.PspxPath+"/v1/webhook_endpoints", "application/x-www-form-urlencoded", form)
	if code != 200 {
		t.Fatalf("webhook endpoint: %d %v", code, ep)
	}
	if code, out := do("POST", mount.PspxPath+"/webhook_endpoints/"+ep["id"].(string)+"/roll", "application/json", `{"expiresInSeconds": 60}`); code != 200 || out["secret"] == nil {
		t.Fatalf("roll: %d %v", code, out)
	}
	if code, out := do("POST", mount.PspyPath+"/payments/tr_unknown/chargeback", "application/json", ""); code != 404 || out["status"] != 404.0 {
		t.Fatalf("chargeback: %d %v", code, out)
	}
	if code, out := do("GET", mount.DeliveriesPath+"?provider=pspx", "", ""); code != 200 || out["deliveries"] == nil {
		t.Fatalf("deliveries: %d %v", code, out)
	}
}

func TestEachSandboxesBaseURLIsAPageForABrowserAndItsAPIStaysTheProviders(t *testing.T) {
	sb := mount.New("http://sandbox.test", slog.New(slog.DiscardHandler))
	t.Cleanup(sb.Close)
	mux := http.NewServeMux()
	sb.Register(mux)
	for _, c := range []struct {
		path, contentType, contains string
		status                      int
	}{
		{mount.PspxPath + "/", "text/html", "4242 4242 4242 4242", http.StatusOK},
		{mount.PspyPath + "/", "text/html", "/v2/payments", http.StatusOK},
		{mount.PspxPath + "/v1/customers/cus_1", "application/json", "API key", http.StatusUnauthorized},
		{mount.PspyPath + "/v2/nothing", "application/", "", http.StatusNotFound},
		{mount.IdpPath + "/", "text/html", "/.well-known/openid-configuration", http.StatusOK},
		{mount.IdpPath + "/idpB/.well-known/openid-configuration", "application/json", `"issuer":"http://sandbox.test/_sandbox/idp/idpB"`, http.StatusOK},
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		body := rec.Body.String()
		if rec.Code != c.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), c.contentType) || !strings.Contains(body, c.contains) {
			t.Errorf("GET %s: %d %q, want %d %s containing %q:\n%s", c.path, rec.Code, rec.Header().Get("Content-Type"), c.status, c.contentType, c.contains, body)
		}
		if c.contentType == "text/html" && !strings.Contains(body, `<meta name="viewport"`) {
			t.Errorf("GET %s has no viewport", c.path)
		}
	}
}
