// Package testkit holds what every Berth test suite needs, so that each service does not grow its
// own copy: Eventually here, and in subpackages an in-process gRPC server (grpctest), per-test
// PostgreSQL databases (pgtest) and per-test NATS streams (natstest).
package testkit
