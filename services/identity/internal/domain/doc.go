// Package domain holds the identity context's entities and their invariants: projects and their
// members (operators), apps with their signing key pairs, API keys, users, user roles and the
// referral codes of invites. It is pure Go: no gRPC, SQL or NATS, so the same rules hold whichever
// adapter stores or serves them.
package domain
