// Package app holds the identity use cases and the ports (store interfaces) they need. Use cases
// enforce app scoping and turn domain changes into outbox events; adapters implement the ports for
// memory (development) and PostgreSQL (production), and porttest checks both against one suite.
package app
