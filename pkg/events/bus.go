package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/berthhq/berth/pkg/config"
	"github.com/berthhq/berth/pkg/tracing"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// DefaultPrefix is the subject and stream prefix when Bus.Prefix is empty.
const DefaultPrefix = "berth"

// duplicateWindow is how long JetStream remembers a Nats-Msg-Id. A relay that published an event but
// crashed before marking it republishes within seconds, well inside this window.
const duplicateWindow = 2 * time.Minute

// validToken is what a prefix or durable name may hold: no subject separators or wildcards, and
// nothing a stream or consumer name refuses.
var validToken = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// PrefixSetting declares the variable that sets Bus.Prefix.
var PrefixSetting = config.Setting{Name: "BERTH_EVENT_PREFIX", Kind: config.Text, Default: DefaultPrefix,
	Check: func(s string) error {
		if !validToken.MatchString(s) {
			return errors.New("must be letters, digits, - and _ only (it names streams and subjects)")
		}
		return nil
	},
	Doc: "stream and subject prefix, so deployments sharing one NATS server keep their events apart; every process of one deployment uses the same"}

// Bus is Berth's JetStream topology. Stream and subject names share Prefix so that tests sharing one
// NATS server cannot collide.
type Bus struct {
	JS     jetstream.JetStream
	Prefix string // "" means DefaultPrefix
}

func (b Bus) prefix() string {
	if b.Prefix == "" {
		return DefaultPrefix
	}
	return b.Prefix
}

// Subject is the NATS subject of an event type: "<prefix>.<type>".
func (b Bus) Subject(eventType eventsv1.Type) string {
	return b.subject(string(eventType))
}

// wildcard is the subject filter of every event of a context: "<prefix>.<context>.>".
func (b Bus) wildcard(context string) string {
	return b.subject(context + ".>")
}

func (b Bus) subject(rest string) string {
	return b.prefix() + "." + rest
}

// Stream is the name of the stream that holds a context's events: "<PREFIX>_<CONTEXT>".
func (b Bus) Stream(context string) string {
	return strings.ToUpper(b.prefix() + "_" + context)
}

// Streams lists every stream EnsureStreams manages: one per context of the catalog (Contexts), so
// one context's retention or replay never touches another's.
func (b Bus) Streams() []string {
	contexts := Contexts()
	names := make([]string, len(contexts))
	for i, c := range contexts {
		names[i] = b.Stream(c)
	}
	return names
}

// EnsureStreams creates or updates one file-backed stream per context, <PREFIX>_IDENTITY holding
// <prefix>.identity.> and so on, each with a two-minute duplicate window. Every process may call it
// on start-up; it is idempotent.
func (b Bus) EnsureStreams(ctx context.Context) error {
	if !validToken.MatchString(b.prefix()) {
		return fmt.Errorf("events: bus prefix %q may hold only letters, digits, '_' and '-'", b.Prefix)
	}
	for _, c := range Contexts() {
		cfg := jetstream.StreamConfig{
			Name:       b.Stream(c),
			Subjects:   []string{b.wildcard(c)},
			Storage:    jetstream.FileStorage,
			Duplicates: duplicateWindow,
		}
		_, err := b.JS.CreateOrUpdateStream(ctx, cfg)
		if err != nil {
			// Replicas starting together race to create a stream: the loser's create is refused
			// (as a name in use, or by the server's subject check, as subjects that overlap the
			// winner's) although the stream it wanted exists now; asking again updates that one.
			_, err = b.JS.CreateOrUpdateStream(ctx, cfg)
		}
		if err != nil {
			return fmt.Errorf("events: ensure stream %s: %w", b.Stream(c), err)
		}
	}
	return nil
}

// Publish sends ev as JSON with Nats-Msg-Id = ev.ID and waits for the stream's ack, so a nil error
// means the event is stored (or was already, as a duplicate).
func (b Bus) Publish(ctx context.Context, ev Event) error {
	msg, err := b.message(ev)
	if err != nil {
		return err
	}
	if _, err := b.JS.PublishMsg(ctx, msg, jetstream.WithMsgID(ev.ID)); err != nil {
		return fmt.Errorf("events: publish %s %s: %w", ev.Type, ev.ID, err)
	}
	return nil
}

// batchAckWait bounds how long PublishBatch waits for the acks of a batch it has sent, when ctx
// sets no sooner deadline: as long as a lone Publish waits by default.
const batchAckWait = 5 * time.Second

// PublishBatch publishes evs in order as Publish does, but pipelined: it sends every event before
// it waits for the first ack, so a batch costs about one round trip to JetStream rather than one
// per event. It returns how many events, from the first, are stored (or were already), and the
// error that stopped it at the next one.
//
// JetStream stores one connection's messages in the order they arrive, so the stream holds the
// batch in its order. One case differs from publishing one at a time: if JetStream refuses an event
// and stores a later one of the same batch, that later one is stored first. Both are then
// published again with the refused one (the duplicate window drops the copy), so none is lost.
func (b Bus) PublishBatch(ctx context.Context, evs []Event) (int, error) {
	futures := make([]jetstream.PubAckFuture, 0, len(evs))
	var stop error
	for _, ev := range evs {
		msg, err := b.message(ev)
		if err != nil {
			stop = err
			break
		}
		f, err := b.JS.PublishMsgAsync(msg, jetstream.WithMsgID(ev.ID))
		if err != nil {
			stop = fmt.Errorf("events: publish %s %s: %w", ev.Type, ev.ID, err)
			break
		}
		futures = append(futures, f)
	}
	timeout := time.NewTimer(batchAckWait)
	defer timeout.Stop()
	for i, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return i, fmt.Errorf("events: publish %s %s: %w", evs[i].Type, evs[i].ID, err)
		case <-ctx.Done():
			return i, ctx.Err()
		case <-timeout.C:
			return i, fmt.Errorf("events: publish %s %s: no acknowledgement within %s", evs[i].Type, evs[i].ID, batchAckWait)
		}
	}
	return len(futures), stop
}

// message is ev as the NATS message Publish sends.
func (b Bus) message(ev Event) (*nats.Msg, error) {
	if err := ev.validate(); err != nil {
		return nil, err
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("events: encode event %s: %w", ev.ID, err)
	}
	msg := &nats.Msg{Subject: b.Subject(ev.Type), Data: body}
	for k, v := range ev.Trace {
		if msg.Header == nil {
			msg.Header = nats.Header{}
		}
		msg.Header.Set(k, v)
	}
	return msg, nil
}

// contextOf returns the context an event type belongs to, which picks its stream. It accepts a type
// the catalog does not declare, as long as its context does: a consumer must keep reading a stream
// in which a newer producer publishes types this build does not know yet.
func contextOf(eventType eventsv1.Type) (string, error) {
	t := string(eventType)
	ctxName, rest, ok := strings.Cut(t, ".")
	if !ok || rest == "" || strings.ContainsAny(t, " *>") || strings.Contains(t, "..") || strings.HasSuffix(t, ".") {
		return "", fmt.Errorf("events: event type %q is not <context>.<name>", eventType)
	}
	contexts := Contexts()
	if !slices.Contains(contexts, ctxName) {
		return "", fmt.Errorf("events: event type %q names unknown context %q (known: %s)", eventType, ctxName, strings.Join(contexts, ", "))
	}
	return ctxName, nil
}

// filterFor returns the stream holding types and the subject filter to ask the server for. NATS 2.9
// servers accept a single filter subject per consumer, so several types are fetched with their
// context's wildcard and narrowed by the caller (see apply). Every type must be declared: a consumer
// of a type nobody publishes would wait for ever.
func (b Bus) filterFor(types []eventsv1.Type) (stream, filter string, err error) {
	if len(types) == 0 {
		return "", "", errors.New("events: no event types given")
	}
	var ctxName string
	for _, t := range types {
		if err := checkDeclared(t); err != nil {
			return "", "", err
		}
		c, _ := contextOf(t) // checkDeclared checked it
		if ctxName != "" && c != ctxName {
			return "", "", fmt.Errorf("events: event types %v span several contexts; one consumer reads one stream", types)
		}
		ctxName = c
	}
	if len(types) == 1 {
		return b.Stream(ctxName), b.Subject(types[0]), nil
	}
	return b.Stream(ctxName), b.wildcard(ctxName), nil
}

// decodeMsg parses a message into an Event and checks that it is one: a valid envelope published on
// the subject its type maps to.
func (b Bus) decodeMsg(msg jetstream.Msg) (Event, error) {
	var ev Event
	if err := json.Unmarshal(msg.Data(), &ev); err != nil {
		return Event{}, fmt.Errorf("not an event envelope: %w", err)
	}
	if err := ev.validate(); err != nil {
		return Event{}, err
	}
	if msg.Subject() != b.Subject(ev.Type) {
		return Event{}, fmt.Errorf("event type %q arrived on subject %q", ev.Type, msg.Subject())
	}
	if h := msg.Headers(); h != nil {
		for _, k := range tracing.Fields() {
			if v := h.Get(k); v != "" {
				if ev.Trace == nil {
					ev.Trace = tracing.Carrier{}
				}
				ev.Trace[k] = v
			}
		}
	}
	return ev, nil
}
