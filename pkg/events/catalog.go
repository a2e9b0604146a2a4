package events

import (
	"fmt"
	"slices"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	"github.com/berthhq/berth/proto/registry"
)

// catalog is the event catalog as the payload messages declare it (option berth.events.v1.event).
type catalog struct {
	payloads map[eventsv1.Type]protoreflect.MessageDescriptor
	types    []eventsv1.Type // sorted
	contexts []string        // sorted, each once
}

// loadCatalog reads the catalog once, on first use, from the files of every context in
// proto/registry, not from the packages the program happens to import: the catalog decides which
// streams EnsureStreams creates, so a process must see every context's events, also those of
// packages it never uses itself. A declaration that eventsv1.Declarations refuses cannot have been
// generated (make proto fails on it), so meeting one here is a broken build and panics.
var loadCatalog = sync.OnceValue(func() catalog {
	decls, err := eventsv1.Declarations(registry.Files())
	if err != nil {
		panic(fmt.Sprintf("events: the event catalog is inconsistent: %v", err))
	}
	c := catalog{payloads: make(map[eventsv1.Type]protoreflect.MessageDescriptor, len(decls))}
	for _, d := range decls {
		c.payloads[d.Type] = d.Payload
		c.types = append(c.types, d.Type)
		if !slices.Contains(c.contexts, d.Context()) {
			c.contexts = append(c.contexts, d.Context())
		}
	}
	slices.Sort(c.contexts)
	return c
})

// Types returns every declared event type, sorted.
func Types() []eventsv1.Type { return slices.Clone(loadCatalog().types) }

// Payload returns the message declared as eventType's payload, or nil when no message declares the
// type.
func Payload(eventType eventsv1.Type) protoreflect.MessageDescriptor {
	return loadCatalog().payloads[eventType]
}

// Contexts returns the bounded contexts that declare events, sorted: the first segment of each
// declared type. Each has its own stream (Bus.Streams).
func Contexts() []string { return slices.Clone(loadCatalog().contexts) }

// checkDeclared fails unless eventType is in the catalog. The syntax and context are checked first,
// for the more precise message.
func checkDeclared(eventType eventsv1.Type) error {
	if _, err := contextOf(eventType); err != nil {
		return err
	}
	if Payload(eventType) == nil {
		return fmt.Errorf("events: no payload message declares event type %q (option berth.events.v1.event)", eventType)
	}
	return nil
}
