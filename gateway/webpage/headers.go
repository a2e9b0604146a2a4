package webpage

import "net/http"

// SetSecurityHeaders sets the headers every answer of a hosted page carries. formTarget is the
// redirect's origin when a form is rendered ("" for none): form-action also governs the redirect
// that follows the post. imageSource is the origin of the one image the page shows (an app's
// logo, Brand.LogoSource), "" for none: images from anywhere else stay blocked.
func SetSecurityHeaders(h http.Header, formTarget, imageSource string) {
	formAction := "'self'"
	if formTarget != "" {
		formAction += " " + formTarget
	}
	img := ""
	if imageSource != "" {
		img = "; img-src " + imageSource
	}
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"+img+"; form-action "+formAction+
		"; frame-ancestors 'none'; base-uri 'none'")
	setOtherHeaders(h)
}

// SetStrictSecurityHeaders sets the headers of a page that runs no inline style or script at all
// (the console): everything it loads comes from its own origin as files, every form posts back
// to it, and no page may frame it. The other headers are the hosted pages'.
func SetStrictSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'")
	setOtherHeaders(h)
}

// setOtherHeaders sets what every page's answer carries beside its policy: no framing by older
// browsers, no referrer leaving the page (links carry tokens), no caching of what is personal, no
// guessing of media types.
func setOtherHeaders(h http.Header) {
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// AllowScript lets the answer run the inline scripts that carry nonce (a fresh NewToken per
// answer), and nothing else: the pages need script only for the browser's WebAuthn calls.
func AllowScript(h http.Header, nonce string) {
	h.Set("Content-Security-Policy", h.Get("Content-Security-Policy")+"; script-src 'nonce-"+nonce+"'")
}
