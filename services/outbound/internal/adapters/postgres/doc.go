// Package postgres implements the outbound stores on PostgreSQL. Deliveries are claimed with
// FOR UPDATE SKIP LOCKED and a lease, so replicas share the work without sending one attempt
// twice; a consumer's deliveries join the inbox transaction its ctx carries (pgxx.Q, pgxx.InTx).
package postgres
