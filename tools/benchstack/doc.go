// Command benchstack measures the read path of the whole stack against the least a server must do,
// in the same run (`make bench-stack`). It finds a PostgreSQL server as the tests do (pgtest),
// builds the real all-in-one binary and starts it as a separate process on fresh databases, the
// split deployment (every production binary and the gateway, each a process of its own, on
// databases of their own and a NATS server on loopback, seeded through its admin API; -split) and
// the baseline (./baseline: net/http + pgx reading the same rows from the all-in-one's databases),
// drives them in turn over loopback with keep-alive connections and prints, per route and server:
// requests per second, p50 and p99 latency, the server's CPU time per request (all of the split's
// processes together), database transactions per request and the ratio of each server's
// throughput to the baseline's.
//
// It exits non-zero on errors only (start-up failures, more failed answers than -max-error-rate),
// never on a performance threshold: the numbers are for reading and comparing, and a shared or busy
// machine moves them.
package main
