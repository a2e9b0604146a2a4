package porttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func testUpdateAPIKey(t *testing.T, newStore Factory) {
	ctx := context.Background()
	seedKey := func(t *testing.T, s app.Store) domain.APIKey {
		t.Helper()
		k := domain.APIKey{ID: uuid.NewString(), AppID: seedApp(t, s).ID, Type: domain.KeyRead, Name: "server",
			Description: "backend", Hash: []byte("hash-bytes"), CreatedAt: t0, UpdatedAt: t0}
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		return k
	}

	t.Run("writes the descriptive fields and the events together", func(t *testing.T) {
		s, outbox := newStore(t)
		k := seedKey(t, s)
		ev := mustEvent(t, identityv1.EventAPIKeyChanged, k.AppID)
		got, err := s.UpdateAPIKey(ctx, k.ID, func(cur *domain.APIKey) ([]events.Event, error) {
			wantEqual(t, "current key handed to fn", *cur, k)
			cur.Name, cur.Description, cur.UpdatedAt = "renamed", "new text", t0.Add(time.Hour)
			// Nothing but name, description and updatedAt may change through this port.
			cur.Type, cur.AppID, cur.Hash, cur.CreatedAt = domain.KeyWrite, uuid.NewString(), []byte("other"), t0.Add(time.Hour)
			return []events.Event{ev}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := k
		want.Name, want.Description, want.UpdatedAt = "renamed", "new text", t0.Add(time.Hour)
		wantEqual(t, "returned key", got, want)
		stored, err := s.GetAPIKey(ctx, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "stored key", stored, want)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{ev.ID})
	})

	t.Run("an error from fn writes nothing", func(t *testing.T) {
		s, outbox := newStore(t)
		k := seedKey(t, s)
		_, err := s.UpdateAPIKey(ctx, k.ID, func(cur *domain.APIKey) ([]events.Event, error) {
			cur.Name = "renamed"
			return []events.Event{mustEvent(t, identityv1.EventAPIKeyChanged, k.AppID)}, errBoom
		})
		if !errors.Is(err, errBoom) {
			t.Fatalf("error = %v, want boom", err)
		}
		stored, _ := s.GetAPIKey(ctx, k.ID)
		wantEqual(t, "stored key", stored, k)
		wantEqual(t, "outbox", pendingIDs(t, outbox), []string{})
	})

	t.Run("an unknown key is not found", func(t *testing.T) {
		s, _ := newStore(t)
		_, err := s.UpdateAPIKey(ctx, uuid.NewString(), func(*domain.APIKey) ([]events.Event, error) { return nil, nil })
		wantNotFound(t, "UpdateAPIKey", err)
	})
}

func testProjectMembers(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s, _ := newStore(t)
	p, other := seedProject(t, s), seedProject(t, s)
	m := domain.ProjectMember{ID: uuid.NewString(), ProjectID: p.ID, Email: "Op@Example.test", Name: "Op", CreatedAt: t0}
	if err := s.AddProjectMember(ctx, m); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetProjectMember(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "GetProjectMember", got, m)

	same := domain.ProjectMember{ID: uuid.NewString(), ProjectID: p.ID, Email: "op@example.TEST", Name: "Again", CreatedAt: t0}
	if err := s.AddProjectMember(ctx, same); !errors.Is(err, domain.ErrMemberTaken) {
		t.Errorf("same email in the same project: error = %v, want ErrMemberTaken", err)
	}
	elsewhere := same
	elsewhere.ProjectID = other.ID
	if err := s.AddProjectMember(ctx, elsewhere); err != nil {
		t.Errorf("same email in another project: %v", err)
	}
	orphan := domain.ProjectMember{ID: uuid.NewString(), ProjectID: uuid.NewString(), Email: "x@example.test", Name: "X", CreatedAt: t0}
	wantNotFound(t, "member of an unknown project", s.AddProjectMember(ctx, orphan))
	_, err = s.GetProjectMember(ctx, uuid.NewString())
	wantNotFound(t, "unknown member", err)
	_, err = s.GetProjectMember(ctx, "not-a-uuid")
	wantNotFound(t, "malformed member id", err)
}

func testOperatorKeys(t *testing.T, newStore Factory) {
	ctx := context.Background()
	s, _ := newStore(t)
	_, err := s.GetOperatorKey(ctx)
	wantNotFound(t, "GetOperatorKey before any key", err)
	first, err := s.CreateOperatorKey(ctx, []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "first create", first, []byte("first"))
	// A second replica racing on a fresh deployment must end up with the first key.
	second, err := s.CreateOperatorKey(ctx, []byte("second"))
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "second create", second, []byte("first"))
	got, err := s.GetOperatorKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "GetOperatorKey", got, []byte("first"))
}
