// Package module is the service template's composition contract. Every bounded context exports one
// Module value from services/<name>/server; the production binary (svcmain.Main), the all-in-one
// process, the cluster test and the checks on deploy/ are all driven by the module list, and the
// REST edge and the event catalog by proto/registry, so adding a context is its folder, one list
// entry, one registry entry, go.work and its deploy/ entries (docs/adding-a-context.md).
//
// A Module builds a Process from Common: the settings every module shares (database, bus, tokens,
// logger, clock, a way to reach other modules, its own settings through Env). The Process is the
// one implementation of a running service: its gRPC server, its store's pool, its outbox relay, its
// event subscriptions and durable consumers. Run, Ready and Close are therefore written once, and
// readiness (database reachable, consumers running) means the same thing in every service.
package module
