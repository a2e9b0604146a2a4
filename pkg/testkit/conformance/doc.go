// Package conformance runs a port's conformance cases against one adapter. An adapter that cannot
// honour a case (the memory store has no transactions to roll back) declares it with an Exempt and
// a reason, in its own test, where a reader of that adapter sees it; the case is then reported as
// skipped with the reason rather than failing, and an exemption that names no case fails the run,
// so renaming a case cannot leave a stale exemption that silently covers nothing.
//
// Traced and Traceparents let a suite require what every store owes the traces crossing it: the
// events of a state change carry the trace context the change was made in.
package conformance
