// Package proto holds Berth's protobuf sources and the Go code generated from them (committed).
// Run `make proto` to regenerate; `make proto-check` fails when the committed code has drifted.
package proto
