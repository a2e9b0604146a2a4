// Package domain holds the identity context's entities and their invariants: projects, apps with
// their signing key pairs, API keys, users and user roles. It is pure Go: no gRPC, SQL or NATS, so
// the same rules hold whichever adapter stores or serves them.
package domain
