package edge

import (
	"io"
	"net/http"
	"strings"
)

// The edge serves canonical paths only. A path with a "." or ".." segment, or an empty one
// ("//"), names no route: forwarded as it is, "/v1/tenants/.." would reach route 5 with the id
// ".."; cleaned, it would name another resource than the one the client sent, and a host's
// http.ServeMux (the all-in-one's) answers it with a 307 redirect to the cleaned path, which is
// no answer of either family and would send a client's PUT elsewhere. So every such request,
// whatever its method, is refused with 400 in the path's family before anything routes it.

// nonCanonicalPath is the refusal's message; its validation is "path".
const nonCanonicalPath = `path: must not contain empty, "." or ".." segments`

// canonicalPath reports whether an escaped path (URL.EscapedPath) has no empty segment but the
// last (a trailing slash is a path of its own, which no ServeMux cleans) and no dot segment,
// spelled with dots or with their escapes (%2e), which a client or proxy may decode. A segment
// that only holds dots among other bytes ("..t1", "a%2F..%2Fb") is an ordinary value.
func canonicalPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return true // "*" and the like: the runtime answers them with its routing error
	}
	for rest := p[1:]; ; {
		seg, tail, more := strings.Cut(rest, "/")
		if (more && seg == "") || dotSegment(seg) {
			return false
		}
		if !more {
			return true
		}
		rest = tail
	}
}

// dotSegment reports whether a segment is "." or "..", each dot possibly escaped.
func dotSegment(seg string) bool {
	dots := 0
	for seg != "" {
		switch {
		case seg[0] == '.':
			seg = seg[1:]
		case len(seg) >= 3 && seg[0] == '%' && seg[1] == '2' && (seg[2] == 'e' || seg[2] == 'E'):
			seg = seg[3:]
		default:
			return false
		}
		if dots++; dots > 2 {
			return false
		}
	}
	return dots > 0
}

// checkPath refuses a request whose path is not canonical, with the body drained first, so the
// client's connection stays usable and a client still sending its body is not reset.
func checkPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if canonicalPath(r.URL.EscapedPath()) {
			next.ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body) // bounded by limitBody
		writeFailure(w, familyOfPath(r.URL.Path), failure{status: http.StatusBadRequest, message: nonCanonicalPath, validation: "path"})
	})
}

// Front is the handler of an HTTP address where a host's own routes stand in front of the edge:
// host is an http.ServeMux with ops endpoints, sandboxes or pages at their paths and the edge
// (New's handler) at "/". A ServeMux redirects a request whose path it would clean instead of
// handing it to any handler, so Front sends every request with a path that is not canonical to
// edge, which refuses it in the path's family, and all others to host.
func Front(host, edge http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if canonicalPath(r.URL.EscapedPath()) {
			host.ServeHTTP(w, r)
			return
		}
		edge.ServeHTTP(w, r)
	})
}
