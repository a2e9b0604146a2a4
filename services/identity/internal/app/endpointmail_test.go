package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/adapters/outbound"
	"github.com/berthhq/berth/services/identity/internal/app"

	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

// endpointDisabled is outbound's event for an endpoint of appID.
func endpointDisabled(t *testing.T, appID string) events.Event {
	t.Helper()
	ev, err := events.New("outbound", outboundv1.EventEndpointDisabled, appID, &outboundv1.EndpointDisabled{
		AppId: appID, EndpointId: uuid.NewString(), Url: "https://hooks.example.test/berth",
		FailingSince: "2025-06-02T08:09:10Z", At: "2025-06-07T08:09:10Z",
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// recipients are the addresses of the mails sent from the n-th on.
func (s *fakeSender) recipients(from int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var to []string
	for _, m := range s.sent[from:] {
		to = append(to, m.To)
	}
	slices.Sort(to)
	return to
}

func TestADisabledEndpointIsMailedOnceToEveryAcceptedMemberOfItsProjectEvenWhenTheEventComesAgain(t *testing.T) {
	f := newFixture(t)
	f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	f.consoleMember(t, f.app.ProjectID, "grace@example.test")
	f.inviteMember(t, f.app.ProjectID, "invited@example.test") // no console account yet: not told
	other, err := f.svc.CreateProject(context.Background(), "other")
	if err != nil {
		t.Fatal(err)
	}
	f.consoleMember(t, other.ID, "stranger@example.test")
	before := f.mailer.count()

	inbox := events.NewMemoryInbox()
	handle := outbound.Handler(f.svc, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ev := endpointDisabled(t, f.app.ID)
	for delivery := 1; delivery <= 3; delivery++ { // the first delivery, then two redeliveries
		applied, err := inbox.Once(context.Background(), outbound.Durable, ev.ID, func(ctx context.Context) error { return handle(ctx, ev) })
		if err != nil || applied != (delivery == 1) {
			t.Fatalf("delivery %d: applied = %v, %v; want applied only the first time", delivery, applied, err)
		}
	}

	if got, want := f.mailer.recipients(before), []string{"ada@example.test", "grace@example.test"}; !slices.Equal(got, want) {
		t.Fatalf("mailed %v, want each accepted member of the app's project once: %v", got, want)
	}
	msg := f.mailer.last(t)
	for _, want := range []string{"https://hooks.example.test/berth", "2025-06-02 08:09 UTC", "https://berth.test/console/apps/" + f.app.ID + "/events"} {
		if !strings.Contains(msg.Text, want) || !strings.Contains(msg.HTML, want) {
			t.Errorf("the notice lacks %q:\n%s", want, msg.Text)
		}
	}
	if !strings.Contains(msg.Subject, f.app.Name) {
		t.Errorf("subject %q does not name the app %q", msg.Subject, f.app.Name)
	}
}

func TestANoticeWhoseMailFailedIsSentWhenTheEventComesAgain(t *testing.T) {
	f := newFixture(t)
	f.consoleMember(t, f.app.ProjectID, "ada@example.test")
	before := f.mailer.count()
	inbox := events.NewMemoryInbox()
	handle := outbound.Handler(f.svc, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ev := endpointDisabled(t, f.app.ID)
	deliver := func() (bool, error) {
		return inbox.Once(context.Background(), outbound.Durable, ev.ID, func(ctx context.Context) error { return handle(ctx, ev) })
	}

	f.mailer.fail = errors.New("smtp down")
	if applied, err := deliver(); err == nil || applied {
		t.Fatalf("a failed mail: applied = %v, %v; want the error, so the event comes back", applied, err)
	}
	f.mailer.fail = nil
	if applied, err := deliver(); err != nil || !applied {
		t.Fatalf("redelivery after the mailer recovered: applied = %v, %v", applied, err)
	}
	if got := f.mailer.recipients(before); !slices.Equal(got, []string{"ada@example.test"}) {
		t.Fatalf("mailed %v, want ada once", got)
	}
}

func TestANoticeThatCanNeverBeMailedIsAcknowledged(t *testing.T) {
	cases := []struct {
		name  string
		opts  []func(*app.Config)
		event func(f *fixture) events.Event
	}{
		{"no mailer", []func(*app.Config){func(c *app.Config) { c.Mailer = nil }}, func(f *fixture) events.Event { return endpointDisabled(t, f.app.ID) }},
		{"an unknown app", nil, func(*fixture) events.Event { return endpointDisabled(t, uuid.NewString()) }},
		{"an app id that is no UUID", nil, func(*fixture) events.Event { return endpointDisabled(t, "not-an-app") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.opts...)
			handle := outbound.Handler(f.svc, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err := handle(context.Background(), c.event(f)); err != nil {
				t.Fatalf("handler = %v, want nil: redelivering cannot help", err)
			}
		})
	}
}

func TestTheNoticeIsInTheLanguageTheMemberWasInvitedIn(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.svc.InviteMember(ctx, f.app.ProjectID, "jana@example.test", "Jana", "de"); err != nil {
		t.Fatal(err)
	}
	link, _ := url.Parse(invitationLink.FindString(f.mailer.last(t).Text))
	if _, err := f.svc.AcceptInvitation(ctx, app.AcceptInput{Token: link.Query().Get("token"), Name: "Jana", Password: memberPassword, Client: browserOf}); err != nil {
		t.Fatal(err)
	}
	f.consoleMember(t, f.app.ProjectID, "ada@example.test") // invited without a language: English
	before := f.mailer.count()
	if err := f.svc.NotifyEndpointDisabled(ctx, app.DisabledEndpoint{AppID: f.app.ID, URL: "https://hooks.example.test/in",
		FailingSince: time.Date(2025, 6, 2, 8, 9, 10, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	subjects := map[string]string{}
	f.mailer.mu.Lock()
	for _, m := range f.mailer.sent[before:] {
		subjects[m.To] = m.Subject
	}
	f.mailer.mu.Unlock()
	if got := subjects["jana@example.test"]; got != "Webhooks von app gehen an einen Endpunkt nicht mehr hinaus" {
		t.Errorf("the German member's subject = %q", got)
	}
	if got := subjects["ada@example.test"]; got != "Webhooks of app are no longer sent to one of its endpoints" {
		t.Errorf("the English member's subject = %q", got)
	}
}
