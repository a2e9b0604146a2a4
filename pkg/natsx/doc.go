// Package natsx connects Berth processes to NATS: an in-process JetStream server for the all-in-one
// process and tests, and a client connection to an external server (or cluster) for production.
package natsx
