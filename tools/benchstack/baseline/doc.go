// Command baseline is the least a server must do to answer the routes the whole-stack benchmark
// drives: one process, net/http and pgx, reading the very rows the stack serves from the stack's own
// databases, checking the read key by a constant-time compare against the key it was given, and
// answering a JSON envelope of the same shape and about the same size. benchstack measures Berth
// against it in the same run, so a ratio says how much of a request's cost is the architecture
// (edge, gRPC hops, API-key verification, the access-policy interceptor) rather than the machine.
//
// It is configured from the environment by benchstack, which starts it:
//
//	BASELINE_ADDR                     listen address
//	BASELINE_IDENTITY_DATABASE_URL    the stack's identity database (users)
//	BASELINE_TENANT_DATABASE_URL      the stack's tenant database (tenants, addresses)
//	BASELINE_APP_ID, BASELINE_READ_KEY the app and the read key a request must present
package main
