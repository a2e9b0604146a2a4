// Package target finds the Berth deployment berthctl calls: each service's admin gRPC address and
// the admin token. Each value comes from the first of: a flag, the environment (berthctl's
// declared settings), the demo.json of a running all-in-one (`make run`), the declared default.
// So berthctl needs no flags against `make run`, and a deployment's environment still wins.
package target
