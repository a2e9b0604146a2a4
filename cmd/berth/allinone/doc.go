// Package allinone starts every Berth service, the REST edge and (unless told otherwise) an
// embedded NATS JetStream server in one process. It is what `make run` runs and what the contract
// tests start; production runs the same server packages as separate processes (see deploy/).
package allinone
