// Command genevents writes the Event* constants of the event catalog: for every proto package whose
// messages declare event types (option berth.events.v1.event), an events.berth.go beside its
// generated code with one eventsv1.Type constant per type. proto/gen.sh runs it after protoc with
// every .proto file as an argument.
//
// It reads the declarations from the compiled descriptors of every context in proto/registry. An
// argument whose package is not linked, or that declares services or events outside every context
// of the registry, is an error (its package must be added there), so that no package's events are
// silently left without constants.
package main
