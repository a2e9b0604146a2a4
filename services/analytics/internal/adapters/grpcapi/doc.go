// Package grpcapi is the inbound adapter: it serves analytics/v1's AnalyticsService (route 8) over
// the use cases in package app and renders the read models as the contract's items. Access is
// enforced before a handler runs by the authn policy interceptor; handlers take the caller's app
// from the authenticated principal, so an app only ever sees its own sign-ins.
package grpcapi
