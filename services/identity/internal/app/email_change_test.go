package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// Route 18: a user's email may change EmailChanges times a day. Refused changes (an address of
// another user) count, which is the probe the limit bounds; unchanged or invalid emails do not.
func TestEmailChangesAreLimitedPerUserPerDay(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.newUser(t, f.app.ID, "taken@example.test", "")
	change := func(email string) error {
		return f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, domain.UserPatch{Email: &email})
	}
	changes := app.DefaultLoginLimits.EmailChanges
	wantStatus(t, "taken address", change("taken@example.test"), codes.InvalidArgument)
	for i := range changes - 1 {
		if err := change(fmt.Sprintf("ada%d@example.test", i)); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	current := fmt.Sprintf("ADA%d@example.test", changes-2) // the same address in other case
	if err := change(current); err != nil {
		t.Fatalf("re-sending the current email: %v", err)
	}
	wantStatus(t, "invalid email", change("not an email"), codes.InvalidArgument)
	if err := f.svc.UpdateUser(ctx, f.app.ID, f.user.ID, domain.UserPatch{Nickname: ptr("nick")}); err != nil {
		t.Fatalf("a patch without email: %v", err)
	}
	err := change("one-more@example.test")
	wantStatus(t, "change over the daily limit", err, codes.ResourceExhausted)
	if got := grpcx.RetryAfterOf(grpcx.StatusOf(err)); got != 24*time.Hour {
		t.Errorf("retry-after = %v, want a day", got)
	}
	f.now = f.now.Add(24*time.Hour + time.Second)
	if err := change("next-day@example.test"); err != nil {
		t.Fatalf("the next day: %v", err)
	}
}
