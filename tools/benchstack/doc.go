// Command benchstack measures the read path of the whole stack against the least a server must do,
// in the same run (`make bench-stack`). It finds a PostgreSQL server as the tests do (pgtest),
// builds the real all-in-one binary and starts it as a separate process on fresh databases, starts
// the baseline (./baseline: net/http + pgx reading the same rows from the stack's own databases)
// as another process, drives both over loopback with keep-alive connections and prints, per route
// and server: requests per second, p50 and p99 latency, the server process's CPU time per request,
// database transactions per request and the ratio of the stack's throughput to the baseline's.
//
// It exits non-zero on errors only (start-up failures, more failed answers than -max-error-rate),
// never on a performance threshold: the numbers are for reading and comparing, and a shared or busy
// machine moves them.
package main
