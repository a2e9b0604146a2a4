// Package memory is the in-process analytics store: the embedded development default and the fast
// half of the store conformance suite. It pairs with events.NewMemoryInbox; nothing it does can
// fail half-way, so an event's effects need no transaction here.
package memory
