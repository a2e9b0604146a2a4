package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// publicTypes maps each internal event type an app hears about to its public types. One internal
// event may be several public ones (a renewal is a payment too); Map refines the two whose public
// type depends on the payload (a tenant update that deleted it, a promotion that was a referral
// reward).
var publicTypes = map[eventsv1.Type][]string{
	identityv1.EventUserCreated:          {"user.created"},
	identityv1.EventUserUpdated:          {"user.updated"},
	identityv1.EventUserDeleted:          {"user.deleted"},
	identityv1.EventUserFrozen:           {"user.frozen"},
	identityv1.EventUserUnfrozen:         {"user.unfrozen"},
	identityv1.EventUserEmailVerified:    {"user.email_verified"},
	identityv1.EventUserPasswordChanged:  {"user.password_changed"},
	identityv1.EventSessionsRevoked:      {"user.sessions_revoked"},
	tenantv1.EventTenantCreated:          {"tenant.created"},
	tenantv1.EventTenantUpdated:          {"tenant.updated"},
	billingv1.EventTenantFrozen:          {"tenant.frozen"},
	billingv1.EventTenantUnfrozen:        {"tenant.unfrozen"},
	billingv1.EventSubscriptionStarted:   {"subscription.started", "payment.succeeded"},
	billingv1.EventSubscriptionRenewed:   {"subscription.renewed", "payment.succeeded"},
	billingv1.EventSubscriptionChanged:   {"subscription.changed"},
	billingv1.EventSubscriptionCancelled: {"subscription.cancelled"},
	billingv1.EventSubscriptionEnded:     {"subscription.ended"},
	billingv1.EventPaymentOneTime:        {"payment.succeeded"},
	billingv1.EventPaymentFailed:         {"payment.failed"},
	billingv1.EventPromotionRedeemed:     {"promotion.redeemed"},
}

// InternalTypes are the internal event types of context (identity, tenant, billing) that become
// public ones: what its consumer reads.
func InternalTypes(context string) []eventsv1.Type {
	var out []eventsv1.Type
	for t := range publicTypes {
		if strings.HasPrefix(string(t), context+".") {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// Public is one public event: its type and the body every delivery of it sends.
type Public struct {
	Type string
	Body []byte
}

// Map turns an internal event and its decoded payload into the public events apps hear about (none
// for a type no app hears about). Each body is {"type","timestamp","data"}: data is the payload as
// the REST routes render its resource (the user as route 14, the tenant as route 5), with
// updatedAt, the change's time, so a receiver can drop a delivery older than what it has.
func Map(ev events.Event, payload proto.Message) ([]Public, error) {
	types := publicTypes[ev.Type]
	switch p := payload.(type) {
	case *tenantv1.TenantChanged:
		if ev.Type == tenantv1.EventTenantUpdated && p.GetTenant().GetDeleted() && slices.Contains(p.GetChangedFields(), "deleted") {
			types = []string{"tenant.deleted"}
		}
	case *billingv1.PromotionRedeemed:
		if p.GetReferredTenantId() != "" {
			types = []string{"referral.rewarded"}
		}
	}
	if len(types) == 0 {
		return nil, nil
	}
	data, err := renderData(payload, ev.Time)
	if err != nil {
		return nil, err
	}
	out := make([]Public, 0, len(types))
	for _, t := range types {
		body, err := json.Marshal(struct {
			Type      string          `json:"type"`
			Timestamp string          `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}{t, ev.Time.UTC().Format(time.RFC3339Nano), data})
		if err != nil {
			return nil, err
		}
		out = append(out, Public{Type: t, Body: body})
	}
	return out, nil
}

// render writes payloads as the REST routes do: every field present, under its proto name.
var render = protojson.MarshalOptions{EmitUnpopulated: true, UseProtoNames: true}

// renderData is the payload's JSON object with updatedAt added.
func renderData(payload proto.Message, at time.Time) (json.RawMessage, error) {
	raw, err := render.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("outbound: render %s: %w", payload.ProtoReflect().Descriptor().FullName(), err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	fields["updatedAt"], _ = json.Marshal(at.UTC().Format(time.RFC3339Nano))
	return json.Marshal(fields)
}

// Publish records, for each public event ev becomes, one pending delivery per enabled endpoint of
// the event's app that subscribes to it. The consumer calls it inside its inbox transaction, so
// the deliveries commit together with the record of the consumed event: none is lost, none doubled.
func (s *Service) Publish(ctx context.Context, ev events.Event, payload proto.Message) error {
	return s.PublishAll(ctx, []events.Event{ev}, []proto.Message{payload})
}

// PublishAll is Publish for several events (payloads[i] is evs[i]'s) in the order given, with one
// read of each app's endpoints and one write of every delivery: the consumer's batch costs a few
// statements, not two per event. The deliveries whose endpoint's lane has room are recorded leased
// to this process's runner and handed to it once committed, so no claim has to find them; the
// others wait in the store for a claim (see RunDeliveries).
func (s *Service) PublishAll(ctx context.Context, evs []events.Event, payloads []proto.Message) error {
	endpoints := map[string][]domain.Endpoint{}
	now := s.now()
	leaseUntil := s.leaseFrom(now)
	var ds, handed, left []domain.Delivery
	for i, ev := range evs {
		pubs, err := Map(ev, payloads[i])
		if err != nil {
			return err
		}
		if len(pubs) == 0 {
			continue
		}
		appID := canonical(ev.AppID)
		eps, ok := endpoints[appID]
		if !ok {
			if eps, err = s.store.EndpointsToDeliver(ctx, appID); err != nil {
				return err
			}
			endpoints[appID] = eps
		}
		for _, p := range pubs {
			for _, e := range eps {
				if !e.Wants(p.Type) {
					continue
				}
				d := domain.Delivery{ID: s.newID(), AppID: e.AppID, EndpointID: e.ID, Type: p.Type, Body: p.Body,
					Status: domain.StatusPending, NextAttemptAt: now, CreatedAt: now}
				if s.lanes.admit(e.ID) {
					d.LeaseUntil = leaseUntil
					handed = append(handed, d)
				} else {
					left = append(left, d)
				}
				ds = append(ds, d)
			}
		}
	}
	if len(ds) == 0 {
		return nil
	}
	if err := s.store.AddDeliveries(ctx, ds...); err != nil {
		return err
	}
	// Handed over (or woken) inside the consumer's transaction, the runner could send a delivery
	// whose record then rolls back, or claim before the deliveries are visible, find nothing and
	// wait for its next poll.
	events.AfterApply(ctx, func() {
		s.handOff(ctx, handed, s.lanes.logger())
		for _, d := range left {
			s.leftBehind(d.EndpointID)
		}
	})
	return nil
}
