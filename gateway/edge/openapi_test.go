package edge

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/berthhq/berth/gateway/apidocs"
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

// People read the REST API at /docs/api, rendered from the document above. The page answers GET
// and HEAD; any other method is a wrong method like on every other path of the edge, /openapi.json
// included: a 405 in the path's family (the older one, as the path is not under /api).
func TestTheAPIReferenceIsServedNextToTheDocument(t *testing.T) {
	h := newHarness(t)
	get := h.do(t, http.MethodGet, apidocs.Path, "", nil)
	if get.Code != http.StatusOK || get.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET %s: %d %q", apidocs.Path, get.Code, get.Header().Get("Content-Type"))
	}
	if !strings.HasPrefix(get.Header().Get("Content-Security-Policy"), "default-src 'none';") || get.Header().Get("X-Request-Id") == "" {
		t.Errorf("GET %s headers: %v", apidocs.Path, get.Header())
	}
	if !strings.Contains(get.Body.String(), `<article id="TenantService_GetTenant" class="op">`) ||
		!strings.Contains(get.Body.String(), `<a href="`+OpenAPIPath+`">`) {
		t.Errorf("GET %s does not show the document's operations", apidocs.Path)
	}

	head := h.do(t, http.MethodHead, apidocs.Path, "", nil)
	if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Length") != strconv.Itoa(get.Body.Len()) {
		t.Errorf("HEAD %s: %d, %d bytes of body, Content-Length %q (GET has %d)", apidocs.Path, head.Code, head.Body.Len(),
			head.Header().Get("Content-Length"), get.Body.Len())
	}

	for _, path := range []string{apidocs.Path, OpenAPIPath} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			t.Run(method+" "+path, func(t *testing.T) {
				wantV1Failure(t, h.do(t, method, path, "", nil), http.StatusMethodNotAllowed, "Method Not Allowed")
			})
		}
	}
}
