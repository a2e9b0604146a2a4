package openapi

import (
	"encoding/json"
	"slices"
	"testing"
)

// document is the part of the document these tests read.
type document struct {
	Servers []struct {
		URL string `json:"url"`
	} `json:"servers"`
	Paths map[string]map[string]struct {
		OperationID string `json:"operationId"`
		Summary     string `json:"summary"`
		Description string `json:"description"`
		RequestBody *struct {
			Content map[string]struct {
				Schema  map[string]any `json:"schema"`
				Example any            `json:"example"`
			} `json:"content"`
		} `json:"requestBody"`
		Responses map[string]struct {
			Content map[string]struct {
				Example any `json:"example"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

func parse(t *testing.T) document {
	t.Helper()
	var d document
	if err := json.Unmarshal(Document, &d); err != nil {
		t.Fatalf("the document does not parse: %v", err)
	}
	return d
}

func TestEveryOperationHasASummaryAndADescription(t *testing.T) {
	d := parse(t)
	n := 0
	for path, item := range d.Paths {
		for method, op := range item {
			n++
			if op.Summary == "" || op.Description == "" {
				t.Errorf("%s %s (%s): summary %q, description %q; both come from the RPC's comment", method, path, op.OperationID, op.Summary, op.Description)
			}
			if op.Summary == op.Description {
				t.Errorf("%s %s: the description repeats the summary", method, path)
			}
		}
	}
	if n == 0 {
		t.Fatal("the document has no operations")
	}
}

func TestTheDocumentNamesItsServerRelatively(t *testing.T) {
	d := parse(t)
	if len(d.Servers) != 1 || d.Servers[0].URL != "/" {
		t.Errorf("servers = %+v, want the relative /", d.Servers)
	}
}

// requestSchema resolves a request body's schema (a $ref, or a nullable allOf around one).
func (d document) requestSchema(s map[string]any) map[string]any {
	if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
		s = all[0].(map[string]any)
	}
	if ref, ok := s["$ref"].(string); ok {
		const prefix = "#/components/schemas/"
		return d.Components.Schemas[ref[len(prefix):]]
	}
	return s
}

func TestARequestBodyRequiresOnlyWhatItsRouteRequires(t *testing.T) {
	d := parse(t)
	for _, tc := range []struct {
		method, path string
		want         []string
	}{
		{"post", "/api/v1/tokens", []string{"client_id", "grant_type"}},
		{"post", "/v1/tenants/{tenantId}/checkout-sessions", []string{"mode", "paymentMethodType", "state"}},
		{"post", "/v1/tenants/{tenantId}/pspx-invoices", []string{"mode", "price", "quantity"}},
		{"put", "/v1/tenants/{tenantId}/pspx-subscriptions", []string{"price", "quantity"}},
		{"post", "/v1/users/{userId}/referral-invites", []string{"email"}},
		{"put", "/v1/tenants/{tenantId}", nil},
		{"put", "/v1/users/{userId}", nil},
	} {
		op := d.Paths[tc.path][tc.method]
		if op.RequestBody == nil {
			t.Errorf("%s %s has no request body", tc.method, tc.path)
			continue
		}
		var got []string
		required, _ := d.requestSchema(op.RequestBody.Content["application/json"].Schema)["required"].([]any)
		for _, f := range required {
			got = append(got, f.(string))
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s requires %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestAnAnswerSchemaStillRequiresEveryField(t *testing.T) {
	d := parse(t)
	token := d.Components.Schemas["berth_identity_v1_Token"]
	required, _ := token["required"].([]any)
	if len(required) != len(token["properties"].(map[string]any)) {
		t.Errorf("the token item requires %v of its fields, want all: every field of an answer is present", required)
	}
}

func TestTheMainRoutesCarryAnExampleRequestAndAnswer(t *testing.T) {
	d := parse(t)
	for _, tc := range []struct {
		method, path, status string
		request              bool
	}{
		{"post", "/api/v1/tokens", "201", true},
		{"post", "/v1/tenants/{tenantId}/checkout-sessions", "200", true},
		{"get", "/v1/users/me", "200", false},
		{"get", "/v1/tenants/{tenantId}", "200", false},
	} {
		op := d.Paths[tc.path][tc.method]
		if tc.request && (op.RequestBody == nil || op.RequestBody.Content["application/json"].Example == nil) {
			t.Errorf("%s %s has no example request", tc.method, tc.path)
		}
		if op.Responses[tc.status].Content["application/json"].Example == nil {
			t.Errorf("%s %s has no example answer for %s", tc.method, tc.path, tc.status)
		}
	}
}
