package contract

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// TestPathsNoRouteCanTakeAnswerInTheFamilyThroughTheAllInOne sends, over raw TCP to the
// all-in-one process (whose own ServeMux serves ops, sandboxes and dev pages in front of the
// edge), paths with dot or empty segments and paths with malformed escapes, with the demo app's
// write key: each answers 400 in the family of its path, never a redirect or Go's plain text, and
// the tenant the first PUT names stays as it was.
func TestPathsNoRouteCanTakeAnswerInTheFamilyThroughTheAllInOne(t *testing.T) {
	s := stacktest.StartWith(t, stacktest.Options{Issuer: "berth-contract", RedirectURI: "http://localhost:3000/callback"})
	addr := strings.TrimPrefix(s.Stack.BaseURL, "http://")
	key := []string{"X-API-KEY: " + s.App.WriteKey, "X-API-KEY-TYPE: write", "X-CLIENT-ID: " + s.App.AppID}
	rename := `{"name":"Renamed through a dot segment"}`
	const (
		dots   = `path: must not contain empty, "." or ".." segments`
		escape = "path: not a valid path (malformed escape)"
	)
	tests := []struct {
		line       string
		body       string
		api        bool
		message    string // /v1: the error; /api/v1: the validation is "path"
		validation string
	}{
		{"PUT /v1/tenants/" + s.App.TenantID + "/x/.. HTTP/1.1", rename, false, dots, "path"},
		{"GET /v1/tenants/.. HTTP/1.1", "", false, dots, "path"},
		{"GET /v1/users/./x HTTP/1.1", "", false, dots, "path"},
		{"GET /v1/tenants/abc/../def HTTP/1.1", "", false, dots, "path"},
		{"POST /api/v1/tokens/.. HTTP/1.1", `{}`, true, dots, "path"},
		{"GET /_sandbox/pspx/../healthz HTTP/1.1", "", false, dots, "path"}, // the host's own paths too
		{"PUT /v1/tenants/%zz HTTP/1.1", rename, false, escape, "path"},
		{"GET /api/v1/tokens/%zz HTTP/1.1", "", true, escape, "path"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			req := tt.line + "\r\nHost: " + addr + "\r\n" + strings.Join(key, "\r\n") + "\r\n"
			if tt.body != "" {
				req += fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\n", len(tt.body))
			}
			if _, err := io.WriteString(conn, req+"\r\n"+tt.body); err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusBadRequest || res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Location") != "" {
				t.Fatalf("answer %d %q (Location %q): %s", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Location"), raw)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("body is not JSON: %s", raw)
			}
			want := fmt.Sprintf(`{"data":null,"error":%q,"message":null,"success":false}`, tt.message)
			if tt.api {
				want = fmt.Sprintf(`{"errors":[{"code":"[E4000]","message":"Bad Request","validation":%q}]}`, tt.validation)
			}
			if b, _ := json.Marshal(got); string(b) != want {
				t.Fatalf("body %s, want %s", b, want)
			}
		})
	}
	// A client that follows redirects (Go's does, with the body, for a 307) would have renamed
	// the tenant had the path been cleaned and redirected.
	req, _ := http.NewRequest(http.MethodPut, s.Stack.BaseURL+"/v1/tenants/"+s.App.TenantID+"/x/..", strings.NewReader(rename))
	req.Header.Set("Content-Type", "application/json")
	for _, h := range key {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("PUT through a redirect-following client: %d", res.StatusCode)
	}
	read := []string{"X-API-KEY: " + s.App.ReadKey, "X-API-KEY-TYPE: read", "X-CLIENT-ID: " + s.App.AppID}
	tenant := getJSON(t, s.Stack.BaseURL+"/v1/tenants/"+s.App.TenantID, read)
	if data, _ := tenant["data"].(map[string]any); data == nil || data["name"] == "Renamed through a dot segment" {
		t.Fatalf("the tenant after the refused PUTs: %v", tenant)
	}
}

// getJSON reads a JSON answer with the given header lines ("Name: value").
func getJSON(t *testing.T, url string, headers []string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for _, h := range headers {
		name, value, _ := strings.Cut(h, ": ")
		req.Header.Set(name, value)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return out
}
