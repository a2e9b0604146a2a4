package fault

import (
	"errors"
	"fmt"
	"time"
)

// Kind says what went wrong from the caller's point of view; it decides the status code.
type Kind int

// The kinds. The zero value is KindInternal, so a Fault built without a kind never reveals more
// than an internal failure would.
const (
	KindInternal        Kind = iota // a fault of Berth's; the caller cannot fix it
	KindInvalid                     // the request is malformed; Field names what failed
	KindNotFound                    // the resource is absent or another app's (answered alike)
	KindUnauthenticated             // credentials are missing or invalid
	KindForbidden                   // valid credentials without the right to do this
	KindPrecondition                // the resource is not in a state that allows the request
	KindUnavailable                 // a dependency is down or not configured; retrying may help
	KindExhausted                   // a limit was reached; retrying after RetryAfter may help
)

var kindNames = [...]string{"internal", "invalid", "not found", "unauthenticated", "forbidden", "precondition", "unavailable", "exhausted"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// InternalMessage is all a caller ever learns of an Internal fault.
const InternalMessage = "Internal Server Error"

// Fault is a failure with a kind and a caller-safe message. Build it with the constructors.
type Fault struct {
	kind       Kind
	message    string
	field      string
	reason     string
	retryAfter time.Duration
	cause      error
}

// Kind is the fault's kind.
func (f *Fault) Kind() Kind { return f.kind }

// Message is the text a caller may see: the message given to the constructor, or InternalMessage
// for an Internal fault.
func (f *Fault) Message() string {
	if f.kind == KindInternal {
		return InternalMessage
	}
	return f.message
}

// Field is the field or rule an Invalid fault names, "" when none applies.
func (f *Fault) Field() string { return f.field }

// Reason is the machine-readable rule an Invalid fault broke within its field, "" when the field
// says enough. It lets a page that shows fixed texts (hosted pages never show a backend's message)
// say which rule failed.
func (f *Fault) Reason() string { return f.reason }

// WithReason returns a copy of f carrying reason (see Reason).
func (f *Fault) WithReason(reason string) *Fault {
	c := *f
	c.reason = reason
	return &c
}

// RetryAfter is how long an Unavailable or Exhausted fault's caller should wait before trying
// again; 0 when unknown.
func (f *Fault) RetryAfter() time.Duration { return f.retryAfter }

// Error is the text for logs: it includes the cause, which Message never does.
func (f *Fault) Error() string {
	if f.cause != nil {
		return f.message + ": " + f.cause.Error()
	}
	return f.message
}

// Unwrap gives errors.Is and errors.As the cause.
func (f *Fault) Unwrap() error { return f.cause }

// Wrap returns a copy of f whose cause is cause: the copy still reads as f to callers, while
// errors.Is(copy, cause) holds. Domain packages use it to give a sentinel fault a precise message
// (domain.NotFound("user") wraps domain.ErrNotFound).
func (f *Fault) Wrap(cause error) *Fault {
	c := *f
	c.cause = cause
	return &c
}

func newf(k Kind, format string, args []any) *Fault {
	return &Fault{kind: k, message: fmt.Sprintf(format, args...)}
}

// Invalid reports bad input. field is the contract's name of the field or rule that failed ("" when
// none applies); the message should make sense on its own, since the caller sees it without the
// field.
func Invalid(field, format string, args ...any) *Fault {
	f := newf(KindInvalid, format, args)
	f.field = field
	return f
}

// InvalidField is Invalid for a field whose message names it: InvalidField("email", "is required")
// reads "email is required". Domain validation uses it so every message says what it is about.
func InvalidField(field, format string, args ...any) *Fault {
	return Invalid(field, "%s %s", field, fmt.Sprintf(format, args...))
}

// NotFound reports a resource that does not exist or belongs to another app. Both answer alike, so
// ids of other apps cannot be probed.
func NotFound(format string, args ...any) *Fault { return newf(KindNotFound, format, args) }

// Unauthenticated reports missing or invalid credentials.
func Unauthenticated(format string, args ...any) *Fault {
	return newf(KindUnauthenticated, format, args)
}

// Forbidden reports valid credentials without the right to do this.
func Forbidden(format string, args ...any) *Fault { return newf(KindForbidden, format, args) }

// Precondition reports a resource that is not in a state that allows the request; the caller can
// change the state and try again.
func Precondition(format string, args ...any) *Fault { return newf(KindPrecondition, format, args) }

// Unavailable reports a dependency that is down or not configured. retryAfter is a hint for the
// caller, 0 when unknown.
func Unavailable(retryAfter time.Duration, format string, args ...any) *Fault {
	f := newf(KindUnavailable, format, args)
	f.retryAfter = max(retryAfter, 0)
	return f
}

// Exhausted reports a limit the caller reached. retryAfter is when trying again may succeed (an
// upper bound is fine), 0 when unknown.
func Exhausted(retryAfter time.Duration, format string, args ...any) *Fault {
	f := newf(KindExhausted, format, args)
	f.retryAfter = max(retryAfter, 0)
	return f
}

// Internal hides cause behind InternalMessage; the cause only reaches the logs (wrap it with what
// was being done: fault.Internal(fmt.Errorf("create tenant: %w", err))).
func Internal(cause error) *Fault {
	return &Fault{kind: KindInternal, message: "internal error", cause: cause}
}

// As returns the outermost fault in err's chain.
func As(err error) (*Fault, bool) {
	var f *Fault
	if errors.As(err, &f) {
		return f, true
	}
	return nil, false
}

// Is reports whether err's outermost fault has kind k.
func Is(err error, k Kind) bool {
	f, ok := As(err)
	return ok && f.kind == k
}
