package grpcx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/berthhq/berth/pkg/fault"
)

// faultCodes is the one mapping from fault kinds to gRPC codes. KindInternal is absent: internal
// faults never reach statusOf's table lookup.
var faultCodes = map[fault.Kind]codes.Code{
	fault.KindInvalid:         codes.InvalidArgument,
	fault.KindNotFound:        codes.NotFound,
	fault.KindUnauthenticated: codes.Unauthenticated,
	fault.KindForbidden:       codes.PermissionDenied,
	fault.KindPrecondition:    codes.FailedPrecondition,
	fault.KindUnavailable:     codes.Unavailable,
	fault.KindExhausted:       codes.ResourceExhausted,
}

// internalStatus is all a caller learns of a failure that is Berth's fault.
func internalStatus() *status.Status { return status.New(codes.Internal, fault.InternalMessage) }

// StatusOf is the status a caller receives for err: the mapping Faults applies, without its log
// line. nil is OK.
func StatusOf(err error) *status.Status {
	st, _ := statusOf(err)
	return st
}

// statusOf maps a handler's error to the status the caller receives. hidden is the error whose
// text the caller must not see (it is only logged), nil when the status tells the whole story.
func statusOf(err error) (st *status.Status, hidden error) {
	if err == nil {
		return status.New(codes.OK, ""), nil
	}
	if f, ok := fault.As(err); ok && f.Kind() != fault.KindInternal {
		return faultStatus(f), nil
	}
	// A caller that hung up or ran out of time is not a server fault, even when a store reported
	// it wrapped in an internal error.
	// The message is the context error's own: a wrapping error's text may say anything.
	switch {
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, context.Canceled.Error()), nil
	case errors.Is(err, context.DeadlineExceeded):
		return status.New(codes.DeadlineExceeded, context.DeadlineExceeded.Error()), nil
	}
	var grpcErr interface{ GRPCStatus() *status.Status }
	if errors.As(err, &grpcErr) {
		st := grpcErr.GRPCStatus()
		// A downstream Internal stays generic; Unknown is what gRPC makes of a plain error's text,
		// which may hold anything, so it is treated the same way. Both were logged where they arose.
		if st.Code() == codes.Internal || st.Code() == codes.Unknown {
			return internalStatus(), nil
		}
		return st, nil
	}
	return internalStatus(), err
}

func faultStatus(f *fault.Fault) *status.Status {
	st := status.New(faultCodes[f.Kind()], f.Message())
	var detail protoadapt.MessageV1
	switch {
	case f.Kind() == fault.KindInvalid && f.Field() != "":
		detail = &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: f.Field(), Description: f.Message(), Reason: f.Reason()},
		}}
	case f.RetryAfter() > 0:
		detail = &errdetails.RetryInfo{RetryDelay: durationpb.New(f.RetryAfter())}
	default:
		return st
	}
	if withDetail, err := st.WithDetails(detail); err == nil {
		return withDetail
	}
	return st
}

// Faults maps every unary handler error to a status (see statusOf) and logs at ERROR the cause the
// caller is not shown; the log line carries the request id (pkg/logx adds it from the context).
func Faults(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		if err != nil {
			return nil, mapped(ctx, log, info.FullMethod, err)
		}
		return resp, nil
	}
}

// StreamFaults is Faults for streaming calls.
func StreamFaults(log *slog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if err := h(srv, ss); err != nil {
			return mapped(ss.Context(), log, info.FullMethod, err)
		}
		return nil
	}
}

func mapped(ctx context.Context, log *slog.Logger, method string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		// The caller hung up or ran out of time while the call ran, so an internal failure is most
		// likely the work it abandoned: a statement PostgreSQL cancelled on its behalf (pgxx), a
		// call downstream. That is the caller's doing, not a fault to log at error; a fault the
		// service named (not found, invalid, ...) still answers as itself (statusOf).
		err = fmt.Errorf("%w: %w", ctxErr, err)
	}
	st, hidden := statusOf(err)
	switch {
	case hidden != nil:
		log.ErrorContext(ctx, "grpc call failed", "method", method, "error", hidden.Error())
	case fault.Is(err, fault.KindUnavailable):
		// The caller is told to retry; operators need to know which dependency failed.
		log.WarnContext(ctx, "grpc call failed: dependency unavailable", "method", method, "error", err.Error())
	}
	return st.Err()
}

// FieldOf returns the field or rule an InvalidArgument status names (its first BadRequest field
// violation), or "".
func FieldOf(st *status.Status) string {
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetField()
		}
	}
	return ""
}

// ReasonOf returns the rule an InvalidArgument status's first field violation names as broken
// (fault.Reason), or "".
func ReasonOf(st *status.Status) string {
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			return br.GetFieldViolations()[0].GetReason()
		}
	}
	return ""
}

// RetryAfterOf returns the delay a status's RetryInfo asks for, or 0 when it has none.
func RetryAfterOf(st *status.Status) time.Duration {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay().IsValid() {
			return max(ri.GetRetryDelay().AsDuration(), 0)
		}
	}
	return 0
}
