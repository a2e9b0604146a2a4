// Package proto holds Berth's protobuf sources and the Go code generated from them (committed):
// protoc's output, and the event-type constants (events.berth.go) that internal/cmd/genevents
// writes from the payloads' berth.events.v1.event declarations.
// Run `make proto` to regenerate; `make proto-check` fails when the committed code has drifted.
package proto
