package grpcx

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/fault"
)

// errDownstreamUnavailable answers a route whose service could not reach another in time.
var errDownstreamUnavailable = fault.Unavailable(0, "Service temporarily unavailable")

// Downstream turns the error of a call to another Berth service into this service's answer:
// NotFound and InvalidArgument (the named thing does not exist for that app) become notFound,
// transient failures a retryable Unavailable, and anything else (a wrong service token, a bug)
// an internal fault, never passed on to this service's caller. what names the call in logs.
func Downstream(err error, what string, notFound *fault.Fault) error {
	switch status.Code(err) {
	case codes.NotFound, codes.InvalidArgument:
		return notFound
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return errDownstreamUnavailable.Wrap(fmt.Errorf("%s: %w", what, err))
	}
	return fault.Internal(fmt.Errorf("%s: %w", what, err))
}
