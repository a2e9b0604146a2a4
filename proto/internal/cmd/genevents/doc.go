// Command genevents writes the Event* constants of the event catalog: for every proto package whose
// messages declare event types (option berth.events.v1.event), an events.berth.go beside its
// generated code with one eventsv1.Type constant per type. proto/gen.sh runs it after protoc with
// every .proto file as an argument.
//
// It reads the declarations from the compiled descriptors in the proto registry, so it imports
// every generated package; an argument the registry does not hold is an error (a new package
// must be imported here), so that no package's events are silently left without constants.
package main
