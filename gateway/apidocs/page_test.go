package apidocs

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/berthhq/berth/proto/openapi"
)

func serve(t *testing.T, p *Page, method string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(t.Context(), method, Path, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	p.ServeHTTP(rec, r)
	return rec
}

// The page is answered as a static, strictly confined HTML document: HEAD gives GET's headers
// without the body, a revalidation with the ETag is a 304, a client that accepts gzip gets the
// same page compressed, and any other method is refused.
func TestThePageIsServedAsAStaticConfinedHTMLDocument(t *testing.T) {
	p, err := Render(openapi.Document, "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	get := serve(t, p, http.MethodGet, nil)
	if get.Code != http.StatusOK || !bytes.Equal(get.Body.Bytes(), p.plain.body) {
		t.Fatalf("GET = %d, %d bytes", get.Code, get.Body.Len())
	}
	for k, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"X-Content-Type-Options":  "nosniff",
		"Cache-Control":           "public, max-age=300",
		"Content-Security-Policy": p.csp,
		"Vary":                    "Accept-Encoding",
		"Content-Encoding":        "",
		"Content-Length":          strconv.Itoa(len(p.plain.body)),
	} {
		if got := get.Header().Get(k); got != want {
			t.Errorf("GET %s = %q, want %q", k, got, want)
		}
	}
	etag := get.Header().Get("ETag")
	if etag == "" {
		t.Fatal("GET answers no ETag")
	}

	t.Run("HEAD has GET's headers and no body", func(t *testing.T) {
		head := serve(t, p, http.MethodHead, nil)
		if head.Code != http.StatusOK || head.Body.Len() != 0 {
			t.Fatalf("HEAD = %d with %d bytes of body", head.Code, head.Body.Len())
		}
		for _, k := range []string{"Content-Type", "Content-Length", "Content-Security-Policy", "Cache-Control", "ETag", "X-Content-Type-Options"} {
			if head.Header().Get(k) != get.Header().Get(k) {
				t.Errorf("HEAD %s = %q, GET's is %q", k, head.Header().Get(k), get.Header().Get(k))
			}
		}
	})

	t.Run("a revalidation with the ETag is a 304", func(t *testing.T) {
		rec := serve(t, p, http.MethodGet, map[string]string{"If-None-Match": etag})
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
			t.Fatalf("conditional GET = %d with %d bytes", rec.Code, rec.Body.Len())
		}
	})

	t.Run("a client that accepts gzip gets the same page compressed, under another ETag", func(t *testing.T) {
		rec := serve(t, p, http.MethodGet, map[string]string{"Accept-Encoding": "gzip, deflate, br"})
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatalf("GET with gzip = %d, Content-Encoding %q", rec.Code, rec.Header().Get("Content-Encoding"))
		}
		if rec.Header().Get("ETag") == etag || rec.Body.Len() > len(p.plain.body)/5 {
			t.Errorf("gzip answer: ETag %s (plain %s), %d bytes (plain %d)", rec.Header().Get("ETag"), etag, rec.Body.Len(), len(p.plain.body))
		}
		zr, err := gzip.NewReader(rec.Body)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, p.plain.body) {
			t.Fatalf("the compressed page is not the page: %v", err)
		}
		if rec.Header().Get("Content-Security-Policy") != p.csp {
			t.Errorf("the compressed answer lacks the policy")
		}
	})

	t.Run("other methods are refused", func(t *testing.T) {
		rec := serve(t, p, http.MethodPost, nil)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
			t.Fatalf("POST = %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
		}
	})
}

func TestAcceptEncodingSelectsGzipOnlyWhenTheClientTakesIt(t *testing.T) {
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"deflate, gzip;q=0.5", true},
		{"GZIP", true},
		{"br", false},
		{"gzip;q=0", false},
		{"gzip; q=0.0, br", false},
		{"*", true},
		{"*;q=0", false},
		{"gzip;q=0, *", false},
		{"identity", false},
	} {
		var values []string
		if tc.header != "" {
			values = []string{tc.header}
		}
		if got := acceptsGzip(values); got != tc.want {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", tc.header, got, tc.want)
		}
	}
}
