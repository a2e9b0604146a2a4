// Package text holds Berth's one rule for text input (docs/api.md, "Bad bytes"): every string a
// caller sends must be valid UTF-8 without NUL or any other control character. Only fields whose
// value is meant to span lines (declared with the proto field option (berth.edge.v1.multi_line),
// or chosen by a domain for the same field) may also hold tab, line feed and carriage return.
//
// Why at all: invalid UTF-8 cannot be put into a proto string (marshalling fails), NUL cannot be
// stored by PostgreSQL, and other control characters forge lines in logs, mails and CSV exports or
// hide text on screens.
//
// The rule is applied in three places, all through this package: the gRPC server chain
// (pkg/grpcx) checks every request message with Message, so direct gRPC callers are held to it;
// the REST edge checks what it is about to forward (and the parts of a request that never become a
// proto field) before anything is marshalled; and domain packages check the fields they own with
// Check, so a use case is never less strict than its transport. Violations are fault.Invalid faults
// naming the field, with one fixed message per broken rule.
package text
