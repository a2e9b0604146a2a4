package apidocs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The view the template renders: every decision is taken here, so the template only walks it.

type pageView struct {
	Title       string
	Version     string
	Description string
	Source      string // the path of the OpenAPI document the page is rendered from
	Schemes     []schemeView
	Groups      []groupView
	Style       template.CSS
}

type schemeView struct {
	Anchor, Name, How, Description string
}

type groupView struct {
	Anchor, Name, Namespace, Description string
	Ops                                  []opView
}

type opView struct {
	Anchor, Method, Path, OperationID string
	Summary, Description              string
	Deprecated                        bool
	Credentials                       [][]schemeRef // alternatives, each the schemes needed together
	CredentialsStated                 bool          // false when neither operation nor document says
	Family                            string        // x-berth-family as a path family, "" when absent
	Params                            []paramView
	ParamNotes                        bool // whether the parameters' description column has anything
	Body                              *bodyView
	Responses                         []responseView
}

type schemeRef struct{ Anchor, Name string }

// paramsNotes reports whether any parameter has a description or an example.
func paramsNotes(ps []paramView) bool {
	for _, p := range ps {
		if p.Description != "" || p.Example != "" {
			return true
		}
	}
	return false
}

type paramView struct {
	Name, In, Type, Description, Example string
	Required, Deprecated                 bool
}

type bodyView struct {
	Description string
	Required    bool
	Contents    []contentView
}

type responseView struct {
	Codes       []string // answers with the same description and content share one entry
	Description string
	Contents    []contentView
}

type contentView struct {
	MediaType string
	Type      string
	Fields    []fieldView
	Notes     bool // whether any field has a description or an example: the column is left out if none
	Answer    bool // a response's content, whose required fields are the ones always present
	Examples  []exampleView
}

type fieldView struct {
	Parent      string // the path to the field from the schema's root: data.items[].
	Name        string // the field's own name: kind
	Depth       int    // nesting, for indentation (a class: the page has no style attributes)
	Type        string
	Required    bool
	Deprecated  bool
	Description string
	Example     string
}

type exampleView struct{ Title, JSON string }

// maxDepth bounds how deep nested objects are expanded into dotted field paths.
const maxDepth = 8

// fixedAnchors are the ids of the page's own sections.
var fixedAnchors = []string{"top", "contents", "envelopes", "credentials", "errors", "operations"}

// renderer builds the view of one document.
type renderer struct {
	doc     *document
	anchors map[string]bool
	short   map[string]string // schema component name -> the name the page shows
	schemes map[string]string // security scheme name -> its entry's anchor
}

func build(d *document, source string) (*pageView, error) {
	r := &renderer{doc: d, anchors: map[string]bool{}, short: shortNames(d.Components.Schemas), schemes: map[string]string{}}
	for _, a := range fixedAnchors {
		r.anchors[a] = true
	}
	v := &pageView{Title: d.Info.Title, Version: d.Info.Version, Description: strings.TrimSpace(d.Info.Description), Source: source}
	if v.Title == "" {
		v.Title = "API"
	}

	// The credentials' entries are anchored before the operations, which link to them; their ids
	// have a prefix no operation id is expected to have.
	for _, n := range sortedKeys(d.Components.SecuritySchemes) {
		s := d.Components.SecuritySchemes[n]
		if s == nil {
			continue
		}
		a := r.anchor("credential-" + slug(n))
		r.schemes[n] = a
		v.Schemes = append(v.Schemes, schemeView{Anchor: a, Name: n, How: schemeHow(s), Description: strings.TrimSpace(s.Description)})
	}

	// Operations next: their ids are what other docs link to.
	type placed struct {
		group string
		op    opView
	}
	var ops []placed
	for _, p := range sortedKeys(d.Paths) {
		item := d.Paths[p]
		if item == nil {
			continue
		}
		for _, m := range item.operations() {
			ov, err := r.operation(p, m.method, item, m.op)
			if err != nil {
				return nil, fmt.Errorf("apidocs: %s %s: %w", m.method, p, err)
			}
			group := firstSegment(p)
			if len(m.op.Tags) > 0 && m.op.Tags[0] != "" {
				group = m.op.Tags[0]
			}
			ops = append(ops, placed{group, ov})
		}
	}

	// Groups: the document's declared tags in its order, then the others by name.
	var order []string
	declared := map[string]string{}
	for _, t := range d.Tags {
		if _, dup := declared[t.Name]; !dup {
			declared[t.Name] = t.Description
			order = append(order, t.Name)
		}
	}
	var rest []string
	seen := map[string]bool{}
	for _, o := range ops {
		if _, ok := declared[o.group]; !ok && !seen[o.group] {
			seen[o.group] = true
			rest = append(rest, o.group)
		}
	}
	sort.Strings(rest)
	for _, name := range append(order, rest...) {
		g := groupView{Name: name, Description: strings.TrimSpace(declared[name])}
		if i := strings.LastIndexByte(name, '.'); i > 0 && i < len(name)-1 {
			g.Namespace, g.Name = name[:i], name[i+1:]
		}
		for _, o := range ops {
			if o.group == name {
				g.Ops = append(g.Ops, o.op)
			}
		}
		if len(g.Ops) == 0 {
			continue // a declared tag no operation uses
		}
		g.Anchor = r.anchor("tag-" + slug(name))
		v.Groups = append(v.Groups, g)
	}

	return v, nil
}

// schemeHow says how a client sends a scheme's credential.
func schemeHow(s *securityScheme) string {
	switch s.Type {
	case "apiKey":
		return fmt.Sprintf("API key in the %s %s", s.Name, s.In)
	case "http":
		if strings.EqualFold(s.Scheme, "bearer") {
			h := "Authorization: Bearer <token>"
			if s.BearerFormat != "" {
				h += " (" + s.BearerFormat + ")"
			}
			return h
		}
		return "HTTP " + s.Scheme + " authentication"
	case "oauth2":
		return "OAuth 2 access token"
	case "openIdConnect":
		return "OpenID Connect"
	}
	return s.Type
}

var safeID = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// anchor claims an id, numbering it when it is taken.
func (r *renderer) anchor(want string) string {
	id := want
	for i := 2; r.anchors[id]; i++ {
		id = want + "-" + strconv.Itoa(i)
	}
	r.anchors[id] = true
	return id
}

// slug is a lower-case id fragment of s.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

func firstSegment(path string) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return "/" + seg
}

func (r *renderer) operation(path, method string, item *pathItem, op *operation) (opView, error) {
	v := opView{Method: method, Path: path, OperationID: op.OperationID, Deprecated: op.Deprecated,
		Summary: strings.TrimSpace(op.Summary), Description: strings.TrimSpace(op.Description)}
	if v.Summary == "" {
		v.Summary = strings.TrimSpace(item.Summary)
	}
	if v.Description == "" {
		v.Description = strings.TrimSpace(item.Description)
	}
	// The operation's id is its anchor when it can be one; OpenAPI requires it to be unique, and a
	// document that breaks that still gets one anchor per operation.
	if safeID.MatchString(op.OperationID) && !r.anchors[op.OperationID] {
		v.Anchor = r.anchor(op.OperationID)
	} else {
		v.Anchor = r.anchor(strings.ToLower(method) + "-" + slug(path))
	}
	switch op.Family {
	case "":
	case "v1":
		v.Family = "/v1"
	case "api":
		v.Family = "/api/v1"
	default:
		v.Family = op.Family
	}

	reqs := r.doc.Security
	v.CredentialsStated = reqs != nil
	if op.Security != nil {
		reqs, v.CredentialsStated = *op.Security, true
	}
	for _, req := range reqs {
		var all []schemeRef
		for _, n := range sortedKeys(req) {
			a, ok := r.schemes[n]
			if !ok {
				return v, fmt.Errorf("security: no scheme %q in components", n)
			}
			all = append(all, schemeRef{Anchor: a, Name: n})
		}
		if len(all) == 0 {
			all = []schemeRef{{Name: "none"}} // an empty requirement: no credential is an alternative
		}
		v.Credentials = append(v.Credentials, all)
	}

	params, err := r.parameters(item.Parameters, op.Parameters)
	if err != nil {
		return v, err
	}
	v.Params, v.ParamNotes = params, paramsNotes(params)
	if op.RequestBody != nil {
		b, err := r.doc.requestBody(op.RequestBody)
		if err != nil {
			return v, fmt.Errorf("requestBody: %w", err)
		}
		bv := &bodyView{Description: strings.TrimSpace(b.Description), Required: b.Required}
		if bv.Contents, err = r.contents(b.Content, false); err != nil {
			return v, fmt.Errorf("requestBody: %w", err)
		}
		v.Body = bv
	}
	if v.Responses, err = r.responses(op.Responses); err != nil {
		return v, err
	}
	return v, nil
}

// parameters are the path item's and the operation's parameters, the operation's replacing the
// item's of the same name and location.
func (r *renderer) parameters(shared, own []*parameter) ([]paramView, error) {
	var all []*parameter
	for _, list := range [][]*parameter{shared, own} {
		for _, p := range list {
			if p == nil {
				continue
			}
			rp, err := r.doc.parameter(p)
			if err != nil {
				return nil, fmt.Errorf("parameter: %w", err)
			}
			replaced := false
			for i, q := range all {
				if q.Name == rp.Name && q.In == rp.In {
					all[i], replaced = rp, true
				}
			}
			if !replaced {
				all = append(all, rp)
			}
		}
	}
	out := make([]paramView, 0, len(all))
	for _, p := range all {
		t, err := r.typeOf(p.Schema, 0)
		if err != nil {
			return nil, fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		pv := paramView{Name: p.Name, In: p.In, Type: t, Required: p.Required || p.In == "path", Deprecated: p.Deprecated,
			Description: strings.TrimSpace(p.Description)}
		pv.Example = exampleText(p.Example)
		if pv.Example == "" && p.Schema != nil {
			if s, _, err := r.doc.schema(p.Schema); err == nil {
				pv.Example = exampleText(s.Example)
			}
		}
		if pv.Example == "" {
			for _, k := range sortedKeys(p.Examples) {
				if e, err := r.doc.example(p.Examples[k]); err == nil && exampleText(e.Value) != "" {
					pv.Example = exampleText(e.Value)
					break
				}
			}
		}
		out = append(out, pv)
	}
	return out, nil
}

func (r *renderer) responses(all map[string]*response) ([]responseView, error) {
	codes := sortedKeys(all)
	sort.SliceStable(codes, func(i, j int) bool { return codeOrder(codes[i]) < codeOrder(codes[j]) })
	var out []responseView
	index := map[string]int{} // the same answer under several codes is shown once
	for _, code := range codes {
		if all[code] == nil {
			continue
		}
		resp, err := r.doc.response(all[code])
		if err != nil {
			return nil, fmt.Errorf("response %s: %w", code, err)
		}
		key, err := json.Marshal(resp)
		if err != nil {
			return nil, fmt.Errorf("response %s: %w", code, err)
		}
		if i, ok := index[string(key)]; ok {
			out[i].Codes = append(out[i].Codes, code)
			continue
		}
		rv := responseView{Codes: []string{code}, Description: strings.TrimSpace(resp.Description)}
		if rv.Contents, err = r.contents(resp.Content, true); err != nil {
			return nil, fmt.Errorf("response %s: %w", code, err)
		}
		index[string(key)] = len(out)
		out = append(out, rv)
	}
	return out, nil
}

// codeOrder sorts status codes numerically, ranges (2XX) after their codes, default last.
func codeOrder(code string) int {
	if n, err := strconv.Atoi(code); err == nil {
		return n * 10
	}
	if len(code) == 3 && strings.EqualFold(code[1:], "XX") && code[0] >= '1' && code[0] <= '5' {
		return int(code[0]-'0')*1000 + 999
	}
	return 1 << 30
}

func (r *renderer) contents(all map[string]*mediaType, answer bool) ([]contentView, error) {
	var out []contentView
	for _, mt := range sortedKeys(all) {
		m := all[mt]
		if m == nil {
			continue
		}
		cv := contentView{MediaType: mt, Answer: answer}
		if m.Schema != nil {
			var err error
			if cv.Type, err = r.typeOf(m.Schema, 0); err != nil {
				return nil, fmt.Errorf("%s: %w", mt, err)
			}
			if cv.Fields, err = r.expand("", m.Schema, 0, nil); err != nil {
				return nil, fmt.Errorf("%s: %w", mt, err)
			}
			for _, f := range cv.Fields {
				cv.Notes = cv.Notes || f.Description != "" || f.Example != ""
			}
		}
		if ex := pretty(m.Example); ex != "" {
			cv.Examples = append(cv.Examples, exampleView{Title: "Example", JSON: ex})
		}
		for _, k := range sortedKeys(m.Examples) {
			e, err := r.doc.example(m.Examples[k])
			if err != nil {
				return nil, fmt.Errorf("%s: example %s: %w", mt, k, err)
			}
			if ex := pretty(e.Value); ex != "" {
				title := "Example: " + k
				if e.Summary != "" {
					title = "Example: " + e.Summary
				}
				cv.Examples = append(cv.Examples, exampleView{Title: title, JSON: ex})
			}
		}
		if len(cv.Examples) == 0 && m.Schema != nil {
			if s, _, err := r.doc.schema(m.Schema); err == nil {
				if ex := pretty(s.Example); ex != "" {
					cv.Examples = append(cv.Examples, exampleView{Title: "Example", JSON: ex})
				}
			}
		}
		out = append(out, cv)
	}
	return out, nil
}

// peel resolves a schema's $refs and the one-element allOf that wraps a reference to make it
// nullable, so the schema that describes the value remains. nullable says whether any layer
// allowed null; name is the last component passed.
func (r *renderer) peel(s *schema) (out *schema, name string, nullable bool, err error) {
	for range maxRefChain {
		if s.Nullable || s.Type.has("null") {
			nullable = true
		}
		switch {
		case s.Ref != "":
			var n string
			if s, n, err = r.doc.schema(s); err != nil {
				return nil, "", false, err
			}
			name = n
		case len(s.AllOf) == 1 && s.AllOf[0] != nil && len(s.Properties) == 0 && len(s.Type.real()) == 0:
			s = s.AllOf[0]
		default:
			return s, name, nullable, nil
		}
	}
	return nil, "", false, fmt.Errorf("schema wrappers nest too deep")
}

func (t schemaType) has(v string) bool {
	for _, x := range t {
		if x == v {
			return true
		}
	}
	return false
}

// real is the type without 3.1's "null".
func (t schemaType) real() []string {
	var out []string
	for _, x := range t {
		if x != "null" {
			out = append(out, x)
		}
	}
	return out
}

// typeOf is a schema's type as the page writes it: "string (int64)", "array of User",
// "map of string", "boolean: true", "null", with ", nullable" when null is allowed too.
func (r *renderer) typeOf(s *schema, depth int) (string, error) {
	if s == nil {
		return "any", nil
	}
	if depth > maxDepth {
		return "…", nil
	}
	s, name, nullable, err := r.peel(s)
	if err != nil {
		return "", err
	}
	var t string
	types := s.Type.real()
	switch {
	case len(s.Enum) > 0 && allNull(s.Enum):
		return "null", nil
	case len(s.AllOf) > 0:
		t, err = r.typeList("all of ", s.AllOf, " and ", depth)
	case len(s.OneOf) > 0:
		t, err = r.typeList("one of ", s.OneOf, " or ", depth)
	case len(s.AnyOf) > 0:
		t, err = r.typeList("any of ", s.AnyOf, " or ", depth)
	case len(types) == 1 && types[0] == "array" || len(types) == 0 && s.Items != nil:
		var inner string
		inner, err = r.typeOf(s.Items, depth+1)
		t = "array of " + inner
	case len(types) > 1:
		t = strings.Join(types, " or ")
	default:
		if len(types) == 1 {
			t = types[0]
		}
		if v, verr := s.mapValue(); verr != nil {
			return "", verr
		} else if v != nil && len(s.Properties) == 0 {
			var inner string
			inner, err = r.typeOf(v, depth+1)
			t = "map of " + inner
		} else if name != "" && (t == "object" || t == "" && len(s.Properties) > 0) {
			t = r.short[name]
		} else if t == "" && len(s.Properties) > 0 {
			t = "object"
		} else if t == "" {
			t = "any"
		}
		if s.Format != "" {
			t += " (" + s.Format + ")"
		}
		if name != "" && t != r.short[name] {
			t += " (" + r.short[name] + ")"
		}
	}
	if err != nil {
		return "", err
	}
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, e := range s.Enum {
			vals = append(vals, compact(e))
		}
		if len(vals) == 1 {
			t += ": " + vals[0]
		} else {
			t += ", one of " + strings.Join(vals, ", ")
		}
	}
	if nullable {
		t += ", nullable"
	}
	return t, nil
}

func (r *renderer) typeList(prefix string, list []*schema, sep string, depth int) (string, error) {
	parts := make([]string, 0, len(list))
	for _, s := range list {
		t, err := r.typeOf(s, depth+1)
		if err != nil {
			return "", err
		}
		parts = append(parts, t)
	}
	return prefix + strings.Join(parts, sep), nil
}

func allNull(vals []json.RawMessage) bool {
	for _, v := range vals {
		if string(bytes.TrimSpace(v)) != "null" {
			return false
		}
	}
	return true
}

// expand lists the fields of an object schema, and of the objects nested in it, as rows whose
// names are paths from the root (user.address.line1, items[].kind, labels.<key>). An array or map
// at the root is entered too. on holds the components being expanded, so a recursive schema
// stops where it refers to itself.
func (r *renderer) expand(prefix string, s *schema, depth int, on []string) ([]fieldView, error) {
	if s == nil || depth >= maxDepth {
		return nil, nil
	}
	s, name, _, err := r.peel(s)
	if err != nil {
		return nil, err
	}
	if name != "" {
		for _, n := range on {
			if n == name {
				return nil, nil
			}
		}
		on = append(on[:len(on):len(on)], name)
	}
	if s.Items != nil && len(s.Properties) == 0 {
		return r.expand(strings.TrimSuffix(prefix, ".")+"[].", s.Items, depth, on)
	}
	if v, err := s.mapValue(); err != nil {
		return nil, err
	} else if v != nil && len(s.Properties) == 0 {
		return r.expand(prefix+"<key>.", v, depth, on)
	}
	props, required, err := r.properties(s, 0)
	if err != nil {
		return nil, err
	}
	var out []fieldView
	for _, k := range sortedKeys(props) {
		p := props[k]
		t, err := r.typeOf(p, 0)
		if err != nil {
			return nil, fmt.Errorf("%s%s: %w", prefix, k, err)
		}
		f := fieldView{Parent: prefix, Name: k, Depth: depth, Type: t, Required: required[k]}
		if p != nil {
			f.Description, f.Deprecated, f.Example = r.describe(p)
		}
		out = append(out, f)
		inner, err := r.expand(prefix+k+".", p, depth+1, on)
		if err != nil {
			return nil, err
		}
		out = append(out, inner...)
	}
	return out, nil
}

// properties are an object schema's fields with those of every allOf part merged in.
func (r *renderer) properties(s *schema, depth int) (map[string]*schema, map[string]bool, error) {
	props, required := map[string]*schema{}, map[string]bool{}
	if depth > maxDepth {
		return props, required, nil
	}
	for _, part := range s.AllOf {
		if part == nil {
			continue
		}
		ps, _, _, err := r.peel(part)
		if err != nil {
			return nil, nil, err
		}
		pp, pr, err := r.properties(ps, depth+1)
		if err != nil {
			return nil, nil, err
		}
		for k, v := range pp {
			props[k] = v
		}
		for k := range pr {
			required[k] = true
		}
	}
	for k, v := range s.Properties {
		props[k] = v
	}
	for _, k := range s.Required {
		required[k] = true
	}
	return props, required, nil
}

// describe is a field's description, whether it is deprecated and its example, from the field's
// own schema or, when it has none, the component it refers to.
func (r *renderer) describe(s *schema) (desc string, deprecated bool, ex string) {
	desc, deprecated, ex = strings.TrimSpace(s.Description), s.Deprecated, exampleText(s.Example)
	if t, _, _, err := r.peel(s); err == nil && t != s {
		if desc == "" {
			desc = strings.TrimSpace(t.Description)
		}
		deprecated = deprecated || t.Deprecated
		if ex == "" {
			ex = exampleText(t.Example)
		}
	}
	return desc, deprecated, ex
}

// shortNames are the names the page shows for schema components: the part after the last _ or .
// (berth_identity_v1_User is User) unless two components would then share one.
func shortNames(all map[string]*schema) map[string]string {
	count := map[string]int{}
	short := func(n string) string {
		if i := strings.LastIndexAny(n, "_."); i >= 0 && i < len(n)-1 {
			return n[i+1:]
		}
		return n
	}
	for n := range all {
		count[short(n)]++
	}
	out := map[string]string{}
	for n := range all {
		if count[short(n)] == 1 {
			out[n] = short(n)
		} else {
			out[n] = n
		}
	}
	return out
}

// pretty is a JSON example indented for reading; "" when there is none.
func pretty(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// exampleText is an example value on one line; "" when there is none.
func exampleText(raw json.RawMessage) string {
	if string(bytes.TrimSpace(raw)) == "null" {
		return ""
	}
	return compact(raw)
}

// compact is a JSON value on one line; "" when there is none.
func compact(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
