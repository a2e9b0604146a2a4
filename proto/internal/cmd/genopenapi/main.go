package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	"github.com/berthhq/berth/proto/registry"
)

// usage: genopenapi DESCRIPTORS EXAMPLES. DESCRIPTORS is a FileDescriptorSet of the protos with
// their source info (protoc --include_source_info --include_imports): the compiled Go descriptors
// carry no comments, and the RPCs' comments are the operations' summaries and descriptions.
// EXAMPLES is the JSON file of example requests and answers by operation id.
func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: genopenapi DESCRIPTORS EXAMPLES")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "genopenapi:", err)
		os.Exit(1)
	}
}

func run(descriptors, examplesFile string) error {
	docs, err := readComments(descriptors)
	if err != nil {
		return err
	}
	examples, err := readExamples(examplesFile)
	if err != nil {
		return err
	}
	doc, err := build(registry.Files(), docs, examples)
	if err != nil {
		return err
	}
	return write(doc)
}

func write(doc obj) error {
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(out, '\n'))
	return err
}

// comment is an RPC's leading comment: its first paragraph is the operation's summary, the rest
// its description.
type comment struct{ summary, description string }

// readComments reads the leading comment of every method in the descriptor set at path.
func readComments(path string) (map[protoreflect.FullName]comment, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[protoreflect.FullName]comment{}
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				out[md.FullName()] = splitComment(fd.SourceLocations().ByDescriptor(md).LeadingComments)
			}
		}
		return true
	})
	return out, nil
}

// splitComment makes a comment's first paragraph one line (the summary) and keeps the other
// paragraphs, each one line, apart (the description).
func splitComment(text string) comment {
	var paras []string
	for _, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			paras = append(paras, p)
		}
	}
	var c comment
	if len(paras) > 0 {
		c.summary = paras[0]
		c.description = strings.Join(paras[1:], "\n\n")
	}
	return c
}

// example is an operation's example request body and answer (either may be absent).
type example struct {
	Request  json.RawMessage `json:"request,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
}

func readExamples(path string) (map[string]example, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out map[string]example
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// obj is a JSON object of the document; encoding/json writes map keys sorted, so the output is
// stable.
type obj = map[string]any

var pathParam = regexp.MustCompile(`\{([A-Za-z0-9_]+)(=[^}]*)?\}`)

// build makes the document of every HTTP-bound method in files, each operation described by its
// RPC's comment in docs and illustrated by its entry in examples.
func build(files *protoregistry.Files, docs map[protoreflect.FullName]comment, examples map[string]example) (obj, error) {
	g := &gen{schemas: obj{}, modes: map[string]bool{}}
	paths := obj{}
	var methods []protoreflect.MethodDescriptor
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				methods = append(methods, sd.Methods().Get(j))
			}
		}
		return true
	})
	sort.Slice(methods, func(i, j int) bool { return methods[i].FullName() < methods[j].FullName() })
	ids := map[string]bool{}
	for _, md := range methods {
		bindings := edgev1.HTTPBindings(md)
		if len(bindings) == 0 {
			continue
		}
		r, _ := proto.GetExtension(md.Options(), edgev1.E_Route).(*edgev1.Route)
		if r.GetFamily() == edgev1.Family_FAMILY_UNSPECIFIED {
			return nil, fmt.Errorf("%s is HTTP-bound but declares no envelope family", md.FullName())
		}
		for i, b := range bindings {
			if b.Method == "" {
				return nil, fmt.Errorf("%s has a binding without a method", md.FullName())
			}
			item, _ := paths[openapiPath(b.Path)].(obj)
			if item == nil {
				item = obj{}
				paths[openapiPath(b.Path)] = item
			}
			id := operationID(md, i)
			if ids[id] {
				return nil, fmt.Errorf("%s: operation id %s is taken", md.FullName(), id)
			}
			ids[id] = true
			c := docs[md.FullName()]
			if c.summary == "" || c.description == "" {
				return nil, fmt.Errorf("%s needs a comment of two paragraphs or more: a one-line summary, then the description", md.FullName())
			}
			op := g.operation(md, r, b.Rule, b.Path, id)
			op["summary"], op["description"] = c.summary, c.description
			if ex, ok := examples[id]; ok {
				if err := addExample(op, ex); err != nil {
					return nil, fmt.Errorf("example of %s: %w", id, err)
				}
			}
			item[strings.ToLower(b.Method)] = op
		}
	}
	for id := range examples {
		if !ids[id] {
			return nil, fmt.Errorf("an example names operation %s, which does not exist", id)
		}
	}
	if g.conflict != "" {
		return nil, fmt.Errorf("message %s is both a request's and an answer's: its schemas would differ in what they require", g.conflict)
	}
	return obj{
		"openapi": "3.0.3",
		"info": obj{"title": "Berth", "version": "1",
			"description": "The REST surface of Berth as it is on the wire, generated from the protos (proto/internal/cmd/genopenapi)."},
		// Relative: the document describes the edge it is fetched from, whatever its public URL.
		"servers": []any{obj{"url": "/", "description": "the edge serving this document"}},
		"paths":   paths,
		"components": obj{
			"schemas": g.schemas,
			"securitySchemes": obj{
				"apiKey":   obj{"type": "apiKey", "in": "header", "name": "X-API-KEY", "description": "With X-API-KEY-TYPE (read or write, as the route asks) and X-CLIENT-ID (the app). Server side only."},
				"bearer":   obj{"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "A tenant access token (route 1)."},
				"operator": obj{"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "A project member's operator token (the console's session; berthctl operator-token)."},
			},
		},
	}, nil
}

// addExample puts ex's request body and success answer into op, beside their schemas.
func addExample(op obj, ex example) error {
	if ex.Request != nil {
		body, ok := op["requestBody"].(obj)
		if !ok {
			return errors.New("a request example for an operation without a body")
		}
		body["content"].(obj)["application/json"].(obj)["example"] = ex.Request
	}
	if ex.Response != nil {
		for status, resp := range op["responses"].(obj) {
			if strings.HasPrefix(status, "2") {
				resp.(obj)["content"].(obj)["application/json"].(obj)["example"] = ex.Response
			}
		}
	}
	return nil
}

// operationID names a method's operation on its i-th binding. OpenAPI requires operation ids to be
// unique, and they are the anchors of the reference page (/docs/api) and the names SDK generators
// give methods, so an additional binding is numbered from 2, as grpc-gateway's
// protoc-gen-openapiv2 does: IdentityService_UpdateUser (PUT), IdentityService_UpdateUser2 (POST).
func operationID(md protoreflect.MethodDescriptor, i int) string {
	id := string(md.Parent().Name()) + "_" + string(md.Name())
	if i > 0 {
		id += strconv.Itoa(i + 1)
	}
	return id
}

// openapiPath writes a path template as OpenAPI does: {name=pattern} becomes {name}.
func openapiPath(p string) string { return pathParam.ReplaceAllString(p, "{$1}") }

type gen struct {
	schemas obj
	// request is set while a request body's schemas are made: they require only the fields marked
	// berth.edge.v1.required, where an answer's require every field (all are always present).
	request bool
	// modes records, by schema name, whether it was made for a request; conflict names a message
	// made for both.
	modes    map[string]bool
	conflict string
}

// operation is one method on one binding.
func (g *gen) operation(md protoreflect.MethodDescriptor, r *edgev1.Route, b *annotations.HttpRule, path, id string) obj {
	in := md.Input()
	bound := map[string]bool{}
	var params []any
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		bound[m[1]] = true
		params = append(params, obj{"name": m[1], "in": "path", "required": true, "schema": obj{"type": "string"}})
	}
	op := obj{"operationId": id, "tags": []any{string(md.Parent().FullName())}}
	g.request = true
	switch body := b.GetBody(); body {
	case "":
	case "*":
		op["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": g.message(in, bound)}}}
		for i := range in.Fields().Len() {
			bound[string(in.Fields().Get(i).Name())] = true
		}
	default:
		f := in.Fields().ByName(protoreflect.Name(body))
		op["requestBody"] = obj{"required": true, "content": obj{"application/json": obj{"schema": g.field(f)}}}
		bound[body] = true
	}
	g.request = false
	for i := range in.Fields().Len() {
		f := in.Fields().Get(i)
		if bound[string(f.Name())] || f.Kind() == protoreflect.MessageKind {
			continue
		}
		params = append(params, obj{"name": string(f.Name()), "in": "query", "required": requiredField(f), "schema": g.field(f)})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	op["security"] = security(r)
	op["responses"] = g.responses(md, r)
	if r.GetFamily() == edgev1.Family_FAMILY_V1 {
		op["x-berth-family"] = "v1"
	} else {
		op["x-berth-family"] = "api"
	}
	return op
}

// security lists the credentials a route accepts (any one of them).
func security(r *edgev1.Route) []any {
	out := []any{}
	if r.GetApiKey() != edgev1.ApiKey_API_KEY_NONE {
		out = append(out, obj{"apiKey": []any{}})
	}
	if r.GetTenantToken() {
		out = append(out, obj{"bearer": []any{}})
	}
	// A route admitting operators (operator) takes a member's token only for their project's app
	// or project; the access rules in docs/behaviour.md say so.
	if r.GetOperatorToken() || r.GetOperator() {
		out = append(out, obj{"operator": []any{}})
	}
	return out
}

// responses are the success in the route's family and the errors of that family.
func (g *gen) responses(md protoreflect.MethodDescriptor, r *edgev1.Route) obj {
	status := int(r.GetSuccessStatus())
	if status == 0 {
		status = 200
	}
	var success any
	if r.GetFamily() == edgev1.Family_FAMILY_V1 {
		var data any = obj{"nullable": true, "enum": []any{nil}}
		if !r.GetDataNull() {
			data = g.data(md.Output())
		}
		success = obj{"type": "object", "additionalProperties": false, "required": []any{"success", "message", "error", "data"},
			"properties": obj{"success": obj{"type": "boolean", "enum": []any{true}}, "message": obj{"type": "string"},
				"error": obj{"nullable": true, "enum": []any{nil}}, "data": data}}
	} else {
		success = g.message(md.Output(), nil)
	}
	out := obj{strconv.Itoa(status): obj{"description": r.GetMessage() + " ", "content": obj{"application/json": obj{"schema": success}}}}
	errSchema := obj{"$ref": "#/components/schemas/V1Error"}
	g.schemas["V1Error"] = obj{"type": "object", "additionalProperties": false, "required": []any{"success", "error", "message", "data"},
		"properties": obj{"success": obj{"type": "boolean", "enum": []any{false}}, "error": obj{"type": "string"},
			"message": obj{"nullable": true, "enum": []any{nil}}, "data": obj{"nullable": true, "enum": []any{nil}}}}
	if r.GetFamily() == edgev1.Family_FAMILY_API {
		errSchema = obj{"$ref": "#/components/schemas/APIErrors"}
		g.schemas["APIErrors"] = obj{"type": "object", "additionalProperties": false, "required": []any{"errors"},
			"properties": obj{"errors": obj{"type": "array", "items": obj{"type": "object", "additionalProperties": false,
				"required":   []any{"validation", "code", "message"},
				"properties": obj{"validation": obj{"type": "string"}, "code": obj{"type": "string"}, "message": obj{"type": "string"}}}}}}
	}
	for _, code := range []string{"400", "401", "403", "500"} {
		out[code] = obj{"description": "error", "content": obj{"application/json": obj{"schema": errSchema}}}
	}
	return out
}

// data is a /v1 route's data: the output message, or for a streamed list (chunks with a head and
// items) the list the edge renders around the stream.
func (g *gen) data(out protoreflect.MessageDescriptor) any {
	head, items := out.Fields().ByName("head"), out.Fields().ByName("items")
	if head != nil && items != nil && items.IsList() && head.Message() != nil && head.Message().Name() == "ListHead" {
		props := obj{"kind": obj{"type": "string"}, "itemsLength": obj{"type": "number"},
			"items": obj{"type": "array", "items": g.ref(items.Message())}}
		// A paged list's chunks carry the next page's cursor, which the edge writes after the items
		// when it is set (and only then: an unpaged list, or the last page, has none).
		if next := out.Fields().ByName("next"); next != nil && next.Kind() == protoreflect.StringKind && !next.IsList() {
			props["next"] = obj{"type": "string"}
		}
		return obj{"type": "object", "additionalProperties": false, "required": []any{"kind", "itemsLength", "items"}, "properties": props}
	}
	return g.message(out, nil)
}

// message is the schema of a message's JSON, without the fields in skip (path parameters).
func (g *gen) message(md protoreflect.MessageDescriptor, skip map[string]bool) any {
	if len(skip) == 0 {
		return g.ref(md)
	}
	return g.inline(md, skip)
}

// ref names a message's schema, defining it once; a well-known type is its JSON form.
func (g *gen) ref(md protoreflect.MessageDescriptor) obj {
	if s, ok := wellKnown[md.FullName()]; ok {
		return s()
	}
	name := strings.ReplaceAll(string(md.FullName()), ".", "_")
	if request, seen := g.modes[name]; seen && request != g.request {
		g.conflict = string(md.FullName())
	}
	g.modes[name] = g.request
	if _, ok := g.schemas[name]; !ok {
		g.schemas[name] = obj{} // a placeholder, so a recursive message refers to itself
		g.schemas[name] = g.inline(md, nil)
	}
	return obj{"$ref": "#/components/schemas/" + name}
}

// inline is a message's schema. An answer has every field present, as protojson with
// EmitUnpopulated writes it, except a field with presence (proto3 optional), which protojson leaves
// out when unset (a webhook endpoint's secret outside the answers that issue it); a request needs
// only the fields marked required.
func (g *gen) inline(md protoreflect.MessageDescriptor, skip map[string]bool) obj {
	props, required := obj{}, []any{}
	for i := range md.Fields().Len() {
		f := md.Fields().Get(i)
		if skip[string(f.Name())] {
			continue
		}
		props[string(f.Name())] = g.field(f)
		if g.request && requiredField(f) || !g.request && f.ContainingOneof() == nil {
			required = append(required, string(f.Name()))
		}
	}
	s := obj{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// requiredField reports whether a request field is marked berth.edge.v1.required.
func requiredField(f protoreflect.FieldDescriptor) bool {
	r, _ := proto.GetExtension(f.Options(), edgev1.E_Required).(bool)
	return r
}

// field is a field's schema: its JSON type as protojson renders it (64-bit integers as strings),
// messages nullable (null while unset), optional scalars nullable too.
func (g *gen) field(f protoreflect.FieldDescriptor) any {
	if f.IsMap() {
		return obj{"type": "object", "additionalProperties": g.single(f.MapValue())}
	}
	if f.IsList() {
		return obj{"type": "array", "items": g.single(f)}
	}
	s := g.single(f)
	if f.HasPresence() {
		if f.Kind() == protoreflect.MessageKind {
			return obj{"nullable": true, "allOf": []any{s}}
		}
		s["nullable"] = true
	}
	return s
}

func (g *gen) single(f protoreflect.FieldDescriptor) obj {
	switch f.Kind() {
	case protoreflect.StringKind:
		return obj{"type": "string"}
	case protoreflect.BoolKind:
		return obj{"type": "boolean"}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return obj{"type": "integer"}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return obj{"type": "number"}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// protojson reads a 64-bit integer as a number or a string and writes it as a string;
		// requests show the number the published interface documents (quantity).
		if g.request {
			return obj{"type": "integer", "format": "int64"}
		}
		return obj{"type": "string", "format": "int64"}
	case protoreflect.BytesKind:
		return obj{"type": "string", "format": "byte"}
	case protoreflect.EnumKind:
		return obj{"type": "string"}
	case protoreflect.MessageKind:
		return g.ref(f.Message())
	}
	return obj{}
}

// wellKnown are the JSON forms protojson gives the well-known types the APIs use (a provider's
// objects are passed through as Struct).
var wellKnown = map[protoreflect.FullName]func() obj{
	"google.protobuf.Empty":     func() obj { return obj{"type": "object", "additionalProperties": false} },
	"google.protobuf.Struct":    func() obj { return obj{"type": "object"} },
	"google.protobuf.Value":     func() obj { return obj{} },
	"google.protobuf.ListValue": func() obj { return obj{"type": "array"} },
	"google.protobuf.Timestamp": func() obj { return obj{"type": "string", "format": "date-time"} },
	"google.protobuf.Duration":  func() obj { return obj{"type": "string"} },
}
