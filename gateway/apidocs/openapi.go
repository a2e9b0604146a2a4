package apidocs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The part of OpenAPI 3 the page shows. Fields the page does not show (servers, links, callbacks,
// headers, ...) are not decoded; a document that has them still renders.

type document struct {
	OpenAPI    string               `json:"openapi"`
	Info       info                 `json:"info"`
	Tags       []tag                `json:"tags"`
	Paths      map[string]*pathItem `json:"paths"`
	Components components           `json:"components"`
	Security   []requirement        `json:"security"`
}

type info struct {
	Title       string `json:"title"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

type tag struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type components struct {
	Schemas         map[string]*schema         `json:"schemas"`
	Parameters      map[string]*parameter      `json:"parameters"`
	RequestBodies   map[string]*requestBody    `json:"requestBodies"`
	Responses       map[string]*response       `json:"responses"`
	Examples        map[string]*example        `json:"examples"`
	SecuritySchemes map[string]*securityScheme `json:"securitySchemes"`
}

// requirement is one security requirement: every scheme it names is needed together. An
// operation's list of them are alternatives.
type requirement map[string][]string

type pathItem struct {
	Summary     string       `json:"summary"`
	Description string       `json:"description"`
	Parameters  []*parameter `json:"parameters"`
	Get         *operation   `json:"get"`
	Put         *operation   `json:"put"`
	Post        *operation   `json:"post"`
	Delete      *operation   `json:"delete"`
	Options     *operation   `json:"options"`
	Head        *operation   `json:"head"`
	Patch       *operation   `json:"patch"`
	Trace       *operation   `json:"trace"`
}

// operations lists the item's operations in the order the page shows them.
func (p *pathItem) operations() []struct {
	method string
	op     *operation
} {
	all := []struct {
		method string
		op     *operation
	}{{"GET", p.Get}, {"POST", p.Post}, {"PUT", p.Put}, {"PATCH", p.Patch}, {"DELETE", p.Delete},
		{"HEAD", p.Head}, {"OPTIONS", p.Options}, {"TRACE", p.Trace}}
	out := all[:0]
	for _, m := range all {
		if m.op != nil {
			out = append(out, m)
		}
	}
	return out
}

type operation struct {
	OperationID string               `json:"operationId"`
	Summary     string               `json:"summary"`
	Description string               `json:"description"`
	Tags        []string             `json:"tags"`
	Deprecated  bool                 `json:"deprecated"`
	Parameters  []*parameter         `json:"parameters"`
	RequestBody *requestBody         `json:"requestBody"`
	Responses   map[string]*response `json:"responses"`
	Security    *[]requirement       `json:"security"`       // nil: the document's; empty: none
	Family      string               `json:"x-berth-family"` // Berth's envelope family: v1 or api
}

type parameter struct {
	Ref         string              `json:"$ref"`
	Name        string              `json:"name"`
	In          string              `json:"in"`
	Required    bool                `json:"required"`
	Deprecated  bool                `json:"deprecated"`
	Description string              `json:"description"`
	Schema      *schema             `json:"schema"`
	Example     json.RawMessage     `json:"example"`
	Examples    map[string]*example `json:"examples"`
}

type requestBody struct {
	Ref         string                `json:"$ref"`
	Description string                `json:"description"`
	Required    bool                  `json:"required"`
	Content     map[string]*mediaType `json:"content"`
}

type response struct {
	Ref         string                `json:"$ref"`
	Description string                `json:"description"`
	Content     map[string]*mediaType `json:"content"`
}

type mediaType struct {
	Schema   *schema             `json:"schema"`
	Example  json.RawMessage     `json:"example"`
	Examples map[string]*example `json:"examples"`
}

type example struct {
	Ref         string          `json:"$ref"`
	Summary     string          `json:"summary"`
	Description string          `json:"description"`
	Value       json.RawMessage `json:"value"`
}

type securityScheme struct {
	Type         string `json:"type"`
	Description  string `json:"description"`
	Name         string `json:"name"` // apiKey: the header, query parameter or cookie
	In           string `json:"in"`
	Scheme       string `json:"scheme"` // http: basic, bearer, ...
	BearerFormat string `json:"bearerFormat"`
}

type schema struct {
	Ref                  string             `json:"$ref"`
	Title                string             `json:"title"`
	Description          string             `json:"description"`
	Type                 schemaType         `json:"type"`
	Format               string             `json:"format"`
	Nullable             bool               `json:"nullable"`
	Enum                 []json.RawMessage  `json:"enum"`
	Items                *schema            `json:"items"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"` // a schema or a boolean
	AllOf                []*schema          `json:"allOf"`
	OneOf                []*schema          `json:"oneOf"`
	AnyOf                []*schema          `json:"anyOf"`
	Example              json.RawMessage    `json:"example"`
	Deprecated           bool               `json:"deprecated"`
}

// schemaType is OpenAPI 3.0's type, a string, or 3.1's list of them ("null" among them for a
// nullable value).
type schemaType []string

func (t *schemaType) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*t = schemaType{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("type: %w", err)
	}
	*t = many
	return nil
}

// mapValue is the schema of a map's values, nil when the schema is no map.
func (s *schema) mapValue() (*schema, error) {
	raw := bytes.TrimSpace(s.AdditionalProperties)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil
	}
	var v schema
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("additionalProperties: %w", err)
	}
	return &v, nil
}

// parse decodes an OpenAPI 3 document.
func parse(doc []byte) (*document, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("apidocs: the OpenAPI document: %w", err)
	}
	if !strings.HasPrefix(d.OpenAPI, "3.") {
		return nil, fmt.Errorf("apidocs: not an OpenAPI 3 document (openapi %q)", d.OpenAPI)
	}
	return &d, nil
}

// maxRefChain bounds a chain of $refs that point at $refs; a longer one is a loop.
const maxRefChain = 32

// refName is the component a local reference names: "#/components/schemas/User" is User in
// schemas. References to other documents are refused: the page must render from this one alone.
func refName(ref, kind string) (string, error) {
	name, ok := strings.CutPrefix(ref, "#/components/"+kind+"/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", fmt.Errorf("$ref %q is not a component of %s in this document", ref, kind)
	}
	// JSON Pointer escapes (RFC 6901).
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(name), nil
}

// resolve follows an object's $ref chain through components of kind; ref reads an object's $ref.
func resolve[T any](v *T, ref func(*T) string, kind string, all map[string]*T) (*T, string, error) {
	name := ""
	for range maxRefChain {
		r := ref(v)
		if r == "" {
			return v, name, nil
		}
		n, err := refName(r, kind)
		if err != nil {
			return nil, "", err
		}
		next, ok := all[n]
		if !ok || next == nil {
			return nil, "", fmt.Errorf("$ref %q: no such component", r)
		}
		v, name = next, n
	}
	return nil, "", fmt.Errorf("$ref %q: the references loop", ref(v))
}

func (d *document) schema(s *schema) (*schema, string, error) {
	return resolve(s, func(s *schema) string { return s.Ref }, "schemas", d.Components.Schemas)
}

func (d *document) parameter(p *parameter) (*parameter, error) {
	p, _, err := resolve(p, func(p *parameter) string { return p.Ref }, "parameters", d.Components.Parameters)
	return p, err
}

func (d *document) requestBody(b *requestBody) (*requestBody, error) {
	b, _, err := resolve(b, func(b *requestBody) string { return b.Ref }, "requestBodies", d.Components.RequestBodies)
	return b, err
}

func (d *document) response(r *response) (*response, error) {
	r, _, err := resolve(r, func(r *response) string { return r.Ref }, "responses", d.Components.Responses)
	return r, err
}

func (d *document) example(e *example) (*example, error) {
	e, _, err := resolve(e, func(e *example) string { return e.Ref }, "examples", d.Components.Examples)
	return e, err
}
