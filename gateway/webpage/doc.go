// Package webpage holds what every server-rendered page of the edge shares: the security headers
// that keep a page unframeable, uncached and limited to its own inline styles.
package webpage
