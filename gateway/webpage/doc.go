// Package webpage holds what every server-rendered page of the edge (and the all-in-one's
// development pages) shares: the layout with its one stylesheet, and the security headers that
// keep a page unframeable, uncached and limited to its own inline styles.
package webpage
