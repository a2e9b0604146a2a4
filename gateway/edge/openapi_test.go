package edge

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The edge serves the OpenAPI document, and it names every HTTP route the protos bind, with the
// credentials, statuses and envelope family of each.
func TestTheOpenAPIDocumentIsServedAndCoversEveryRoute(t *testing.T) {
	h := newHarness(t)
	rec := h.do(t, http.MethodGet, OpenAPIPath, "", nil)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %s", OpenAPIPath, rec.Code, rec.Header().Get("Content-Type"))
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			Family    string                     `json:"x-berth-family"`
			Security  []map[string]any           `json:"security"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("not an OpenAPI 3 document: %v", err)
	}
	for _, route := range httpRoutes(t) {
		method, path, _ := strings.Cut(route, " ")
		op, ok := doc.Paths[colonToBraces(path)][strings.ToLower(method)] // httpRoutes writes :param
		if !ok {
			t.Errorf("%s is not in the document", route)
			continue
		}
		if op.Family != "v1" && op.Family != "api" {
			t.Errorf("%s: family %q", route, op.Family)
		}
		for _, code := range []string{"400", "401", "403", "500"} {
			if _, ok := op.Responses[code]; !ok {
				t.Errorf("%s: no %s answer", route, code)
			}
		}
	}
}

// colonToBraces writes /v1/users/:userId as /v1/users/{userId}.
func colonToBraces(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}
