// Package cluster proves that Berth runs as a deployment of separate processes, several replicas
// per service, and survives losing any one of them: its test (make test-cluster) builds the
// production binaries, starts on loopback against PostgreSQL and a NATS server two processes of
// every module of the module list (allinone.Modules; analytics once) and two edge processes (plus
// the provider sandboxes) behind a round-robin TCP balancer, drives the published flows through
// it, SIGKILLs one replica of each service mid-load and starts it again, and then checks that no
// request failed beyond the ones in flight at a kill, that the replicas shared the load, and that
// every event was applied exactly once (the read models agree with the services' own databases)
// and reached the app's webhook receiver.
package cluster
