package apidocs

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Path is where the edge serves the reference.
const Path = "/docs/api"

//go:embed page.html
var pageHTML string

//go:embed style.css
var styleCSS string

var page = template.Must(template.New("apidocs").Funcs(template.FuncMap{
	"lower": strings.ToLower,
	"join":  strings.Join,
}).Parse(pageHTML))

// cacheControl lets browsers and shared caches keep the page for five minutes: it changes only
// when the edge is deployed with a new document, and after that a revalidation with the ETag
// costs a 304.
const cacheControl = "public, max-age=300"

// Page is the rendered reference, ready to serve.
type Page struct {
	plain, gzipped representation
	csp            string
}

// representation is the page's bytes in one content coding, with its own ETag (RFC 9110 8.8.3:
// an entity tag names one representation).
type representation struct {
	body []byte
	etag string
}

func newRepresentation(body []byte, suffix string) representation {
	sum := sha256.Sum256(body)
	return representation{body: body, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + suffix + `"`}
}

// Render builds the page from an OpenAPI 3 document (JSON). source is the path the document
// itself is served at, which the page links to. A document the page cannot show faithfully — a
// $ref to nothing, a security scheme that is not declared — is an error, not a page with holes.
func Render(doc []byte, source string) (*Page, error) {
	d, err := parse(doc)
	if err != nil {
		return nil, err
	}
	v, err := build(d, source)
	if err != nil {
		return nil, err
	}
	v.Style = template.CSS(styleCSS)
	var b bytes.Buffer
	if err := page.Execute(&b, v); err != nil {
		return nil, fmt.Errorf("apidocs: render: %w", err)
	}
	body := b.Bytes()
	// The stylesheet is allowed by the hash of what was rendered, so the policy names exactly the
	// bytes served and nothing else inline can ever apply.
	style, err := inlineStyle(body)
	if err != nil {
		return nil, err
	}
	styleHash := sha256.Sum256(style)
	// The page is mostly repeated table markup: compressed once here, it is a twentieth of its size.
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := zw.Write(body); err != nil {
		return nil, fmt.Errorf("apidocs: compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("apidocs: compress: %w", err)
	}
	return &Page{
		plain:   newRepresentation(body, ""),
		gzipped: newRepresentation(gz.Bytes(), "-gzip"),
		csp: "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(styleHash[:]) + "'; " +
			"img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}, nil
}

// inlineStyle is the content of the page's one <style> element.
func inlineStyle(body []byte) ([]byte, error) {
	const open, end = "<style>", "</style>"
	i := bytes.Index(body, []byte(open))
	if i < 0 || bytes.Count(body, []byte(open)) != 1 {
		return nil, fmt.Errorf("apidocs: the page must have exactly one <style> element")
	}
	rest := body[i+len(open):]
	j := bytes.Index(rest, []byte(end))
	if j < 0 {
		return nil, fmt.Errorf("apidocs: the page's <style> element is not closed")
	}
	return rest[:j], nil
}

// ServeHTTP answers GET and HEAD with the page, gzip-compressed when the client accepts it; a
// conditional request with the page's ETag gets a 304. The edge mounts it for those two methods
// only and answers the others with its routing error; served on its own, the page refuses them
// with a plain 405.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", p.csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", cacheControl)
	h.Add("Vary", "Accept-Encoding")
	rep := p.plain
	if acceptsGzip(r.Header.Values("Accept-Encoding")) {
		rep = p.gzipped
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", rep.etag)
	// ServeContent answers HEAD without a body, If-None-Match with 304 and sets Content-Length.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(rep.body))
}

// acceptsGzip reads Accept-Encoding (RFC 9110 12.5.3): gzip listed without q=0, or * when gzip
// is not listed.
func acceptsGzip(values []string) bool {
	gzipQ, anyQ := -1.0, -1.0
	for _, v := range values {
		for _, item := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(item, ";")
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				if k, val, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gzipQ = q
			case "*":
				anyQ = q
			}
		}
	}
	return gzipQ > 0 || gzipQ < 0 && anyQ > 0
}
