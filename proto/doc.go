// Package proto holds Berth's protobuf sources and the Go code generated from them (committed):
// protoc's output, and the event-type constants (events.berth.go) that internal/cmd/genevents
// writes from the payloads' berth.events.v1.event declarations. registry lists every context's
// package once; the generators, the event catalog and the REST edge derive from it.
// Run `make proto` to regenerate; `make proto-check` fails when the committed code has drifted.
package proto
