package weborigin

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// maxLen bounds an origin; hosts are at most 253 characters, so this leaves room for scheme and port.
const maxLen = 300

// Parse checks that raw is exactly an origin — http or https, a host, an optional port, and no
// userinfo, path, query or fragment — and returns its serialization: scheme and host in lower case,
// the default port (80 for http, 443 for https) dropped. Non-ASCII hosts are refused: browsers send
// the punycode (xn--) form, which is what must be registered.
func Parse(raw string) (string, error) {
	if raw == "" {
		return "", errors.New("must not be empty")
	}
	if len(raw) > maxLen {
		return "", errors.New("must be at most 300 characters")
	}
	for _, r := range raw {
		if r <= ' ' || r >= 0x7f {
			return "", errors.New("must be printable ASCII without spaces")
		}
	}
	if strings.ContainsAny(raw, "?#") {
		return "", errors.New("must not have a query or fragment")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || !strings.Contains(raw, "://") {
		return "", errors.New("must be scheme://host[:port]")
	}
	if u.User != nil {
		return "", errors.New("must not contain userinfo")
	}
	if u.Path != "" || u.RawPath != "" {
		return "", errors.New("must not have a path (not even /)")
	}
	return serialize(u)
}

// Of returns the origin of an absolute http(s) URL such as a redirect URI (its path, query and
// fragment ignored); ok is false when the URL has no usable origin.
func Of(rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Opaque != "" || u.User != nil {
		return "", false
	}
	o, err := serialize(u)
	return o, err == nil
}

func serialize(u *url.URL) (string, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", errors.New("scheme must be http or https")
	}
	host := strings.ToLower(u.Hostname())
	if !validHost(host) {
		return "", errors.New("must have a valid host")
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 literal keeps its brackets in an origin
	}
	port := u.Port()
	if strings.HasSuffix(u.Host, ":") {
		return "", errors.New("port must not be empty")
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return "", errors.New("port must be a number between 1 and 65535")
		}
		if (scheme == "http" && n == 80) || (scheme == "https" && n == 443) {
			port = ""
		}
	}
	if port != "" {
		return scheme + "://" + host + ":" + port, nil
	}
	return scheme + "://" + host, nil
}

// validHost accepts an IP literal or a DNS name of letters, digits, hyphens and dots (lower case by
// now), with no empty label.
func validHost(h string) bool {
	if h == "" {
		return false
	}
	if ip := net.ParseIP(h); ip != nil {
		return true
	}
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// Allowed reports whether the request origin (an Origin header value) is one of allowed, which
// holds origins already normalised by Parse or Of. A header that is not an origin ("null", a
// malformed value) is never allowed.
func Allowed(allowed []string, origin string) bool {
	o, err := Parse(origin)
	if err != nil {
		return false
	}
	for _, a := range allowed {
		if a == o {
			return true
		}
	}
	return false
}
