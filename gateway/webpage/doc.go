// Package webpage holds what every server-rendered page of the edge (and the all-in-one's
// development pages) shares: the layout with its one stylesheet, the app's branding on hosted
// pages (display name, accent colour, logo), the choice of a hosted page's language (Language,
// over pkg/locale), and the security headers that keep a page unframeable, uncached and limited to
// its own inline styles and, on a branded page, its app's logo; and how a page logs the cause of a
// failure it shows only as a generic card (LogFailure).
package webpage
