package grpc

import (
	"context"
	"errors"
	"strings"
	"unicode"

	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/apierr"
	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// toStatus maps a use-case error to the gRPC status callers see. Errors that already are statuses
// (the API-key verifier's) pass through; anything unexpected becomes an Internal error whose cause
// stays in the logs.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	var (
		ve       *domain.ValidationError
		statuser interface{ GRPCStatus() *status.Status }
	)
	switch {
	case errors.As(err, &ve):
		return apierr.Invalid(ve.Field, "%s %s", ve.Field, ve.Reason)
	case errors.Is(err, domain.ErrNotFound):
		return apierr.NotFound("%s", sentence(err.Error()))
	case errors.As(err, &statuser):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return status.FromContextError(err).Err()
	}
	return apierr.Internal(err)
}

// sentence capitalises the first letter of a message ("user not found" -> "User not found").
func sentence(s string) string {
	for i, r := range s {
		return string(unicode.ToUpper(r)) + s[i+len(string(r)):]
	}
	return s
}

// callerApp is the app of the admitted caller. The policy puts a Principal with an app into the
// context of every API-key or tenant-token route, so its absence is a wiring fault, reported as
// Unauthenticated rather than served unscoped.
func callerApp(ctx context.Context) (string, error) {
	p, ok := authn.FromContext(ctx)
	if !ok || strings.TrimSpace(p.AppID) == "" {
		return "", apierr.Unauthenticated("missing credentials")
	}
	return p.AppID, nil
}
