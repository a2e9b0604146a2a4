// Package httpsend makes the HTTP attempts of webhook deliveries (app.Sender): one POST bounded by
// domain.AttemptTimeout, at most domain.MaxResponseBytes of the answer read, no redirect followed.
// In production its dialer refuses loopback, private, link-local, multicast and cloud metadata
// addresses when connecting, after DNS has answered, so a name that resolves (or rebinds) to an
// internal address never reaches it.
package httpsend
