package apidocs

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/proto/openapi"
)

func render(t *testing.T, doc string) string {
	t.Helper()
	p, err := Render([]byte(doc), "/openapi.json")
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return string(p.plain.body)
}

var idAttr = regexp.MustCompile(`\bid="([^"]*)"`)

// Every operation of the document the edge serves is on the page, anchored at its operationId and
// linked from the table of contents, and no two elements share an id (an anchor must lead to one
// place).
func TestEveryOperationOfTheServedDocumentHasItsAnchorAndAContentsLink(t *testing.T) {
	page := render(t, string(openapi.Document))
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openapi.Document, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, item := range doc.Paths {
		for method, op := range item {
			n++
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
				continue
			}
			article := `<article id="` + op.OperationID + `" class="op">`
			i := strings.Index(page, article)
			if i < 0 {
				t.Errorf("%s %s: no %s", method, path, article)
				continue
			}
			head := page[i:min(len(page), i+400)]
			if !strings.Contains(head, ">"+strings.ToUpper(method)+"<") || !strings.Contains(head, "<code class=\"path\">"+path+"</code>") {
				t.Errorf("%s %s: the article at #%s shows another operation:\n%s", method, path, op.OperationID, head)
			}
			if !strings.Contains(page, `<li><a href="#`+op.OperationID+`">`) {
				t.Errorf("%s %s: the contents do not link to #%s", method, path, op.OperationID)
			}
		}
	}
	if n < 30 {
		t.Fatalf("the document has %d operations; expected Berth's routes", n)
	}
	seen := map[string]bool{}
	for _, m := range idAttr.FindAllStringSubmatch(page, -1) {
		if seen[m[1]] {
			t.Errorf("id %q appears twice", m[1])
		}
		seen[m[1]] = true
	}
}

// The page's policy allows its stylesheet by hash, so the hash must be that of the bytes served,
// and nothing may need more: no script, no style attribute, no external resource.
func TestThePolicyAllowsExactlyThePagesOwnStylesheet(t *testing.T) {
	p, err := Render(openapi.Document, "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body := string(p.plain.body)
	style, err := inlineStyle(p.plain.body)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(style)
	if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(p.csp, want) {
		t.Errorf("CSP %q lacks %q", p.csp, want)
	}
	if !strings.HasPrefix(p.csp, "default-src 'none';") || strings.Contains(p.csp, "unsafe") {
		t.Errorf("CSP %q is not strict", p.csp)
	}
	// An address in an attribute or a stylesheet would load something; in text (an example's
	// redirect URI) it is only shown.
	for _, bad := range []string{"<script", " style=", "=\"http://", "=\"https://", "url(", "<link rel=\"stylesheet\"", "<img", "<iframe"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page contains %q", bad)
		}
	}
}

// doc is a small OpenAPI document around one operation.
func doc(op string, components string) string {
	if components == "" {
		components = `{}`
	}
	return `{"openapi":"3.0.3","info":{"title":"Shop","version":"2"},"paths":{"/pets/{petId}":{"put":` + op + `}},"components":` + components + `}`
}

func TestRenderingADocument(t *testing.T) {
	pet := `{"schemas":{"Pet":{"type":"object","required":["nickname"],"properties":{
		"nickname":{"type":"string","description":"What the owner calls it."},
		"tags":{"type":"array","items":{"$ref":"#/components/schemas/Tag"}},
		"parent":{"nullable":true,"allOf":[{"$ref":"#/components/schemas/Pet"}]}}},
		"Tag":{"type":"object","properties":{"label":{"type":"string"},"weight":{"type":"string","format":"int64"}}}},
		"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-KEY"}}}`
	for _, tc := range []struct {
		name       string
		doc        string
		want, not  []string
		wantErrMsg string
	}{
		{
			name: "a $ref is resolved: the component's fields are listed under the operation, nested ones by path",
			doc: doc(`{"operationId":"PutPet","security":[{"key":[]}],"requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Pet"}}}},
				"responses":{"200":{"description":"Saved","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Pet"}}}}}}`, pet),
			want: []string{
				`<article id="PutPet" class="op">`,
				`<code>application/json</code>: <code>Pet</code>`,
				`<code>nickname</code>`, `What the owner calls it.`,
				`<code><span class="parent">tags[].</span>label</code>`, `<code>array of Tag</code>`,
				`<code><span class="parent">tags[].</span>weight</code></td><td><code>string (int64)</code>`,
				`<code>parent</code></td><td><code>Pet, nullable</code>`,
				`<a href="#credential-key"><code>key</code></a>`, `API key in the X-KEY header`,
			},
			// Pet refers to itself: the expansion stops there instead of looping.
			not: []string{`parent.nickname`},
		},
		{
			name: "HTML in the document's texts is escaped",
			doc: doc(`{"operationId":"PutPet","summary":"<b>Save</b> a pet","description":"<script>alert(1)</script> & <img src=x onerror=alert(2)>",
				"parameters":[{"name":"petId","in":"path","required":true,"description":"<i>id</i>","schema":{"type":"string"}}],
				"responses":{"204":{"description":"<em>done</em>"}}}`, ""),
			want: []string{`&lt;b&gt;Save&lt;/b&gt; a pet`, `&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(2)&gt;`,
				`&lt;i&gt;id&lt;/i&gt;`, `&lt;em&gt;done&lt;/em&gt;`},
			not: []string{`<script>`, `<b>Save`, `<img src=x`, `<i>id`, `<em>done`},
		},
		{
			name: "a document without examples renders without an example block",
			doc:  doc(`{"operationId":"PutPet","responses":{"204":{"description":"Saved"}}}`, ""),
			want: []string{`<article id="PutPet" class="op">`, `<span class="code c2">204</span> <span class="text">Saved</span>`},
			not:  []string{`class="example"`, `<dt>Credentials</dt>`},
		},
		{
			name: "examples are shown, indented, and escaped",
			doc: doc(`{"operationId":"PutPet","parameters":[{"name":"petId","in":"path","required":true,"schema":{"type":"string"},"example":"p-1"}],
				"requestBody":{"content":{"application/json":{"schema":{"type":"object"},"example":{"nickname":"<Rex>"}}}},
				"responses":{"200":{"description":"Saved","content":{"application/json":{"examples":{"one":{"summary":"A saved pet","value":{"id":1}}}}}}}}`, ""),
			want: []string{"<pre><code>{\n  &#34;nickname&#34;: &#34;&lt;Rex&gt;&#34;\n}</code></pre>", `<summary>Example: A saved pet</summary>`,
				`Example: <code>&#34;p-1&#34;</code>`},
		},
		{
			name: "answers that share a description and content are listed once under all their codes",
			doc: doc(`{"operationId":"PutPet","security":[],"responses":{"500":{"$ref":"#/components/responses/Err"},"200":{"description":"ok"},"400":{"$ref":"#/components/responses/Err"}}}`,
				`{"responses":{"Err":{"description":"error","content":{"application/json":{"schema":{"type":"object","properties":{"error":{"type":"string"}}}}}}}}`),
			want: []string{`<span class="code c4">400</span> <span class="code c5">500</span> <span class="text">error</span>`, `<dt>Credentials</dt>
<dd>none</dd>`},
		},
		{
			name: "operations without a usable operationId still get one anchor each",
			doc: `{"openapi":"3.0.3","info":{"title":"Shop"},"paths":{"/a":{"get":{"operationId":"Same","responses":{}},"post":{"operationId":"Same","responses":{}}},
				"/b":{"get":{"responses":{}},"put":{"operationId":"has space","responses":{}}}}}`,
			want: []string{`<article id="Same" class="op">`, `<article id="post-a" class="op">`, `<article id="get-b" class="op">`, `<article id="put-b" class="op">`},
		},
		{
			name:       "a $ref to a component the document lacks is refused",
			doc:        doc(`{"operationId":"PutPet","responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/Gone"}}}}}}`, ""),
			wantErrMsg: `"#/components/schemas/Gone": no such component`,
		},
		{
			name:       "a reference to another document is refused",
			doc:        doc(`{"operationId":"PutPet","responses":{"200":{"$ref":"https://example.com/other.json#/x"}}}`, ""),
			wantErrMsg: "is not a component of responses in this document",
		},
		{
			name:       "a security scheme the document does not declare is refused",
			doc:        doc(`{"operationId":"PutPet","security":[{"ghost":[]}],"responses":{}}`, ""),
			wantErrMsg: `no scheme "ghost"`,
		},
		{
			name:       "an OpenAPI 2 document is refused",
			doc:        `{"swagger":"2.0","paths":{}}`,
			wantErrMsg: "not an OpenAPI 3 document",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Render([]byte(tc.doc), "/openapi.json")
			if tc.wantErrMsg != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrMsg) {
					t.Fatalf("Render error = %v, want one containing %q", err, tc.wantErrMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			page := string(p.plain.body)
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(page, n) {
					t.Errorf("the page contains %q", n)
				}
			}
			if t.Failed() {
				t.Logf("page:\n%s", page[strings.Index(page, `<section id="operations"`):])
			}
		})
	}
}
