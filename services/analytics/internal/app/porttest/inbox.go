package porttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// An event's effects run inside the inbox's transaction: when the handler fails after writing,
// neither the writes nor the inbox record survive, so the redelivery applies the event in full.
func effectsCommitWithTheInboxRecord(t *testing.T, store app.Store, inbox events.Inbox) {
	appID, userID, eventID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	effects := func(ctx context.Context) error {
		if err := store.RecordSignIn(ctx, domain.SignIn{ID: eventID, AppID: appID, UserID: userID, At: at}); err != nil {
			return err
		}
		return store.PutUser(ctx, app.UserSnapshot{AppID: appID, UserID: userID, AsOf: at, User: &identityv1.TenantUser{Id: userID}})
	}
	listed := func() []app.SignInRecord {
		t.Helper()
		recs, err := store.ListSignIns(ctx, appID, at.Add(-time.Hour), at.Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}

	failure := errors.New("handler failed after writing")
	applied, err := inbox.Once(ctx, "analytics-identity", eventID, func(ctx context.Context) error {
		if err := effects(ctx); err != nil {
			return err
		}
		return failure
	})
	if !errors.Is(err, failure) || applied {
		t.Fatalf("Once = %v, %v; want the handler's error", applied, err)
	}
	if recs := listed(); len(recs) != 0 {
		t.Fatalf("a failed handler left %d sign-ins behind", len(recs))
	}

	if applied, err := inbox.Once(ctx, "analytics-identity", eventID, effects); err != nil || !applied {
		t.Fatalf("redelivery: Once = %v, %v", applied, err)
	}
	if recs := listed(); len(recs) != 1 || recs[0].User == nil {
		t.Fatalf("after the redelivery listed %+v, want the sign-in with its user", recs)
	}
}
