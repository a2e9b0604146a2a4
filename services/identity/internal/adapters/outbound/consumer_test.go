package outbound_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/mail"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/identity/internal/adapters/memory"
	"github.com/berthhq/berth/services/identity/internal/adapters/outbound"
	"github.com/berthhq/berth/services/identity/internal/adapters/postgres"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain/password"

	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// mailbox keeps every mail the service sends.
type mailbox struct {
	mu   sync.Mutex
	sent []mail.Message
}

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, msg)
	return nil
}

// to lists the recipients of the mails whose subject is subject, sorted.
func (m *mailbox) to(subject string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, msg := range m.sent {
		if msg.Subject == subject {
			out = append(out, msg.To)
		}
	}
	slices.Sort(out)
	return out
}

func (m *mailbox) last() mail.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sent[len(m.sent)-1]
}

// stores are identity's store with the inbox that belongs with it.
var stores = []struct {
	name string
	open func(t *testing.T) (app.Store, events.Inbox)
}{
	{"memory", func(*testing.T) (app.Store, events.Inbox) {
		return memory.New(&events.MemoryOutbox{}), events.NewMemoryInbox()
	}},
	{"postgres", func(t *testing.T) (app.Store, events.Inbox) {
		pool := pgtest.New(t, "identity-outbound-consumer", postgres.Migrate)
		return postgres.New(pool), events.NewPGInbox(pool)
	}},
}

var invitationLink = regexp.MustCompile(`https://berth\.test/console/invitation\?token=[A-Za-z0-9_-]+`)

// member invites email to project and accepts the mailed invitation.
func member(t *testing.T, svc *app.Service, box *mailbox, project, email string) {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.InviteMember(ctx, project, email, "Member", ""); err != nil {
		t.Fatal(err)
	}
	link, _ := url.Parse(invitationLink.FindString(box.last().Text))
	if _, err := svc.AcceptInvitation(ctx, app.AcceptInput{Token: link.Query().Get("token"), Name: "Member", Password: "harbour-lights-42",
		Client: app.MemberClient{IP: "192.0.2.7", UserAgent: "consumer test"}}); err != nil {
		t.Fatal(err)
	}
}

func disabled(t *testing.T, appID string) events.Event {
	t.Helper()
	ev, err := events.New("outbound", outboundv1.EventEndpointDisabled, appID, &outboundv1.EndpointDisabled{AppId: appID,
		EndpointId: uuid.NewString(), Url: "https://hooks.example.test/" + appID, FailingSince: "2026-11-20T06:00:00Z", At: "2026-11-25T06:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestADisabledEndpointIsMailedOnceThroughJetStreamWhenTheEventIsRedelivered drives the durable
// consumer through JetStream on both stores: the event, a copy of it without its message id (as
// after a lost ack, which the stream's duplicate window does not drop), and a marker event of a
// second app last. One durable consumer handles its messages in stream order, so once the marker
// is mailed the copy has been handled: each accepted member of the first app's project was mailed
// once, and the inbox holds the event.
func TestADisabledEndpointIsMailedOnceThroughJetStreamWhenTheEventIsRedelivered(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			store, inbox := st.open(t)
			box := &mailbox{}
			sealer, err := sealbox.New(make([]byte, sealbox.KeySize))
			if err != nil {
				t.Fatal(err)
			}
			svc, err := app.New(app.Config{Store: store, Pepper: []byte("pepper"), Box: sealer, Issuer: "consumer-test",
				PublicURL: "https://berth.test", Passwords: password.Params{MemoryKiB: 64, Time: 1, Threads: 1}, Mailer: box})
			if err != nil {
				t.Fatal(err)
			}
			apps := make([]string, 2)
			for i := range apps {
				p, err := svc.CreateProject(ctx, "project")
				if err != nil {
					t.Fatal(err)
				}
				a, err := svc.CreateApp(ctx, app.NewApp{ProjectID: p.ID, Name: "Shop", RedirectURIs: []string{"https://app.test/cb"}})
				if err != nil {
					t.Fatal(err)
				}
				apps[i] = a.ID
				if i == 0 {
					member(t, svc, box, p.ID, "ada@example.test")
					member(t, svc, box, p.ID, "grace@example.test")
				} else {
					member(t, svc, box, p.ID, "marker@example.test")
				}
			}

			bus, _ := natstest.New(t)
			consumer, err := outbound.ConsumeEndpointEvents(ctx, bus, inbox, svc, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer consumer.Stop()
			ev := disabled(t, apps[0])
			if err := bus.Publish(ctx, ev); err != nil {
				t.Fatal(err)
			}
			copyOf, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bus.JS.Publish(ctx, bus.Subject(ev.Type), copyOf); err != nil {
				t.Fatal(err)
			}
			if err := bus.Publish(ctx, disabled(t, apps[1])); err != nil {
				t.Fatal(err)
			}

			const subject = "Webhooks of Shop are no longer sent to one of its endpoints"
			testkit.Eventually(t, "the marker's project is told", func() bool { return slices.Contains(box.to(subject), "marker@example.test") })
			if got, want := box.to(subject), []string{"ada@example.test", "grace@example.test", "marker@example.test"}; !slices.Equal(got, want) {
				t.Fatalf("mailed %v, want each accepted member once: %v", got, want)
			}
			applied, err := inbox.Once(ctx, outbound.Durable, ev.ID, func(context.Context) error {
				t.Error("the inbox ran an event it had recorded")
				return nil
			})
			if err != nil || applied {
				t.Fatalf("the inbox again: applied %v, %v", applied, err)
			}
		})
	}
}
