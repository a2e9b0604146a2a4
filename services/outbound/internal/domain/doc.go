// Package domain holds the outbound context's model: an app's webhook endpoints (where its public
// events go, under which secret), the public event types and how Berth's internal events map to
// them, the deliveries of those events with their retry schedule, and the Standard Webhooks
// signature.
//
// The package is pure Go: no gRPC, SQL, NATS or HTTP. Validation failures are Invalid faults
// (pkg/fault) naming the field as the caller sent it.
package domain
