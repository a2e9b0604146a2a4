package contract

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/berthhq/berth/proto/openapi"
)

// The contract tests check every answer they receive against the OpenAPI document the edge serves
// (generated from the protos): an answer whose shape or JSON types differ from the document fails
// the test that received it.

// apiDoc is the parsed document: its paths and schemas.
type apiDoc struct {
	paths   []docPath
	schemas map[string]any
}

type docPath struct {
	segments []string                  // "{x}" matches any one segment
	ops      map[string]map[string]any // method (lower case) -> status -> schema
}

var (
	docOnce sync.Once
	doc     apiDoc
	docErr  error
)

func loadDoc() (apiDoc, error) {
	docOnce.Do(func() {
		var raw struct {
			Paths map[string]map[string]struct {
				Responses map[string]struct {
					Content map[string]struct {
						Schema any `json:"schema"`
					} `json:"content"`
				} `json:"responses"`
			} `json:"paths"`
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if docErr = json.Unmarshal(openapi.Document, &raw); docErr != nil {
			return
		}
		doc.schemas = raw.Components.Schemas
		for path, item := range raw.Paths {
			p := docPath{segments: strings.Split(path, "/"), ops: map[string]map[string]any{}}
			for method, op := range item {
				p.ops[method] = map[string]any{}
				for status, resp := range op.Responses {
					p.ops[method][status] = resp.Content["application/json"].Schema
				}
			}
			doc.paths = append(doc.paths, p)
		}
		// Literal segments win over parameters (/v1/users/me before /v1/users/{userId}).
		sort.Slice(doc.paths, func(i, j int) bool { return literals(doc.paths[i]) > literals(doc.paths[j]) })
	})
	return doc, docErr
}

func literals(p docPath) int {
	n := 0
	for _, s := range p.segments {
		if !strings.HasPrefix(s, "{") {
			n++
		}
	}
	return n
}

// schemaFor finds the documented answer of method on path with status; ok is false for a path or
// method the document does not describe (hosted pages, sandboxes, unknown paths).
func (d apiDoc) schemaFor(method, path string, status int) (schema any, ok bool) {
	path, _, _ = strings.Cut(path, "?")
	segs := strings.Split(path, "/")
	for _, p := range d.paths {
		if len(p.segments) != len(segs) {
			continue
		}
		match := true
		for i, s := range p.segments {
			if !strings.HasPrefix(s, "{") && s != segs[i] {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		op, found := p.ops[strings.ToLower(method)]
		if !found {
			return nil, false
		}
		schema, ok = op[strconv.Itoa(status)]
		return schema, ok
	}
	return nil, false
}

// checkAnswer fails t when body does not match the document's answer for the request.
func checkAnswer(t *testing.T, method, path string, status int, body any) {
	t.Helper()
	d, err := loadDoc()
	if err != nil {
		t.Fatalf("the OpenAPI document does not parse: %v", err)
	}
	schema, ok := d.schemaFor(method, path, status)
	if !ok {
		if _, documented := d.schemaFor(method, path, 200); documented {
			t.Errorf("%s %s answered %d, a status the document does not list", method, path, status)
		}
		return
	}
	if problems := d.validate(schema, body, "body"); len(problems) > 0 {
		t.Errorf("%s %s (%d) does not match the OpenAPI document: %s", method, path, status, strings.Join(problems, "; "))
	}
}

// validate checks v against the subset of JSON Schema the generator writes: $ref, allOf, type,
// nullable, enum, properties, required, additionalProperties false, items.
func (d apiDoc) validate(schema any, v any, at string) []string {
	s, _ := schema.(map[string]any)
	if s == nil {
		return nil
	}
	if ref, ok := s["$ref"].(string); ok {
		return d.validate(d.schemas[strings.TrimPrefix(ref, "#/components/schemas/")], v, at)
	}
	if v == nil {
		if s["nullable"] == true {
			return nil
		}
		return []string{at + " is null"}
	}
	var out []string
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			out = append(out, d.validate(sub, v, at)...)
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				found = true
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("%s is %v, not one of %v", at, v, enum))
		}
	}
	typ, _ := s["type"].(string)
	switch typ {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return append(out, fmt.Sprintf("%s is %s, want an object", at, jsonType(v)))
		}
		props, _ := s["properties"].(map[string]any)
		for _, r := range asList(s["required"]) {
			if _, ok := m[r.(string)]; !ok {
				out = append(out, at+"."+r.(string)+" is missing")
			}
		}
		for k, val := range m {
			if ps, ok := props[k]; ok {
				out = append(out, d.validate(ps, val, at+"."+k)...)
			} else if s["additionalProperties"] == false {
				out = append(out, at+"."+k+" is not documented")
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				out = append(out, d.validate(ap, val, at+"."+k)...)
			}
		}
	case "array":
		l, ok := v.([]any)
		if !ok {
			return append(out, fmt.Sprintf("%s is %s, want an array", at, jsonType(v)))
		}
		for i, item := range l {
			out = append(out, d.validate(s["items"], item, fmt.Sprintf("%s[%d]", at, i))...)
		}
	case "string", "boolean":
		if jsonType(v) != map[string]string{"string": str, "boolean": boo}[typ] {
			out = append(out, fmt.Sprintf("%s is %s, want %s", at, jsonType(v), typ))
		}
	case "number", "integer":
		if jsonType(v) != num {
			out = append(out, fmt.Sprintf("%s is %s, want a number", at, jsonType(v)))
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestTheOpenAPIDocumentParsesAndDescribesTheRoutes(t *testing.T) {
	d, err := loadDoc()
	if err != nil || len(d.paths) < 20 {
		t.Fatalf("document: %d paths, %v", len(d.paths), err)
	}
	if _, ok := d.schemaFor("GET", "/v1/users/me", 200); !ok {
		t.Fatal("GET /v1/users/me is not documented")
	}
	// The validator catches a wrong type, a missing field and an undocumented one.
	schema, _ := d.schemaFor("GET", "/v1/tenants/00000000-0000-0000-0000-000000000000", 500)
	if p := d.validate(schema, map[string]any{"success": false, "error": 5, "message": nil, "data": nil}, "body"); len(p) == 0 {
		t.Fatal("a number where a string belongs passed")
	}
	if p := d.validate(schema, map[string]any{"success": false, "message": nil, "data": nil, "extra": 1}, "body"); len(p) != 2 {
		t.Fatalf("a missing and an extra field: %v", p)
	}
}

// TestTheDocumentsExamplesMatchTheirSchemas holds every example request and answer in the
// document to the schema beside it, so an example cannot show a field the route does not have or
// leave out one it always answers with.
func TestTheDocumentsExamplesMatchTheirSchemas(t *testing.T) {
	d, err := loadDoc()
	if err != nil {
		t.Fatal(err)
	}
	type content map[string]struct {
		Schema  any `json:"schema"`
		Example any `json:"example"`
	}
	var raw struct {
		Paths map[string]map[string]struct {
			RequestBody *struct {
				Content content `json:"content"`
			} `json:"requestBody"`
			Responses map[string]struct {
				Content content `json:"content"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Document, &raw); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range raw.Paths {
		for method, op := range item {
			if op.RequestBody != nil {
				if c := op.RequestBody.Content["application/json"]; c.Example != nil {
					n++
					if p := d.validate(c.Schema, c.Example, "request"); len(p) > 0 {
						t.Errorf("%s %s: the example request does not match its schema: %s", method, path, strings.Join(p, "; "))
					}
				}
			}
			for status, resp := range op.Responses {
				if c := resp.Content["application/json"]; c.Example != nil {
					n++
					code, _ := strconv.Atoi(status)
					checkAnswer(t, strings.ToUpper(method), path, code, c.Example)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("the document has no examples")
	}
}
