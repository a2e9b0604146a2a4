package app

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	outboundv1 "github.com/berthhq/berth/proto/outbound/v1"
)

// Source is the producer name on the events this service emits (outboundv1.Event*).
const Source = "outbound"

// Runner settings. A claimed endpoint's batch is sent by goroutines of its own, at most inFlight
// requests at a time, so one slow or dead endpoint holds only its own while every other endpoint's
// run beside it.
const (
	claimLimit  = 512
	perEndpoint = 64
	inFlight    = 8
	// lease covers a whole endpoint batch timing out, with room to record the attempts: a
	// replica that dies mid-batch gives its deliveries back after it (scaled with the schedule,
	// so a test's killed replica gives them back in its time).
	lease = perEndpoint/inFlight*domain.AttemptTimeout + time.Minute
)

// Wake makes RunDeliveries claim now rather than at its next poll: a delivery was recorded or
// made due in this process.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// RunDeliveries sends due deliveries until ctx ends: it claims them every poll interval (or at
// once after Wake) and sends each endpoint's claimed deliveries on goroutines of that endpoint's
// own. Replicas run it side by side: a claim leases its deliveries, so no two send the
// same attempt. It returns when ctx ends and the sends in flight have been cut short.
func (s *Service) RunDeliveries(ctx context.Context, poll time.Duration, log *slog.Logger) {
	if s.sender == nil {
		panic("outbound: RunDeliveries needs a Sender")
	}
	if log == nil {
		log = slog.Default()
	}
	var (
		mu   sync.Mutex
		busy = map[string]bool{}
		wg   sync.WaitGroup
	)
	defer wg.Wait()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.wake:
		}
		mu.Lock()
		skip := make([]string, 0, len(busy))
		for id := range busy {
			skip = append(skip, id)
		}
		mu.Unlock()
		ds, err := s.store.ClaimDue(ctx, Claim{Now: s.now(), Lease: s.backoff.Scaled(lease), Limit: claimLimit, PerEndpoint: perEndpoint, Skip: skip})
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "outbound: claiming due deliveries failed; retrying at the next poll", "error", err.Error())
		}
		byEndpoint := map[string][]domain.Delivery{}
		var order []string
		for _, d := range ds {
			if byEndpoint[d.EndpointID] == nil {
				order = append(order, d.EndpointID)
			}
			byEndpoint[d.EndpointID] = append(byEndpoint[d.EndpointID], d)
		}
		for _, id := range order {
			mu.Lock()
			busy[id] = true
			mu.Unlock()
			// The endpoint is free for its next claim once its requests are answered: that claim
			// overlaps the recording of these attempts, whose deliveries stay leased until then.
			release := sync.OnceFunc(func() {
				mu.Lock()
				delete(busy, id)
				mu.Unlock()
				s.Wake() // the endpoint may have more due
			})
			wg.Go(func() {
				defer release()
				s.sendBatch(ctx, byEndpoint[id], release, log)
			})
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(poll)
	}
}

// sendBatch sends one endpoint's claimed deliveries, at most inFlight at a time, calls sent once
// every request has been answered (or given up), and records their attempts together in one
// write. The endpoint is read once: a batch is sent with the URL and secrets it had when the batch
// began.
func (s *Service) sendBatch(ctx context.Context, ds []domain.Delivery, sent func(), log *slog.Logger) {
	e, err := s.store.GetEndpoint(ctx, ds[0].AppID, ds[0].EndpointID)
	if errors.Is(err, domain.ErrNotFound) {
		return // deleted meanwhile, its deliveries with it
	}
	if err != nil {
		log.WarnContext(ctx, "outbound: reading an endpoint failed; its deliveries return when their lease ends",
			"endpoint_id", ds[0].EndpointID, "error", err.Error())
		return
	}
	secrets, err := s.openSecrets(e)
	if err != nil {
		log.ErrorContext(ctx, "outbound: an endpoint secret does not open; its deliveries wait",
			"endpoint_id", e.ID, "error", err.Error())
		return
	}
	outcomes := make([]outcome, len(ds))
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i, d := range ds {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			outcomes[i] = s.attempt(ctx, e, secrets, d, log)
		})
	}
	wg.Wait()
	sent()
	if ctx.Err() != nil {
		// Stopping: the requests were cut short, so their outcomes are not the receiver's. Nothing
		// is recorded; the deliveries come back when their lease ends (at least once).
		return
	}
	ctx = context.WithoutCancel(ctx) // the outcomes are recorded even if stopping begins now
	var (
		rs                []Recorded
		succeeded, failed bool
	)
	for _, o := range outcomes {
		if !o.record {
			continue
		}
		rs = append(rs, o.Recorded)
		switch {
		case !o.sent:
		case o.Attempt.Succeeded():
			succeeded = true
		default:
			failed = true
		}
	}
	if err := s.store.RecordAttempts(ctx, rs...); err != nil {
		log.WarnContext(ctx, "outbound: recording attempts failed; the deliveries are sent again when their lease ends",
			"endpoint_id", e.ID, "error", err.Error())
		return
	}
	if succeeded || failed {
		s.observe(ctx, e, succeeded, log)
	}
}

// outcome is what one attempt of a batch leaves to record.
type outcome struct {
	Recorded
	record bool // false: nothing to record (signing failed; the lease returns the delivery)
	sent   bool // a request was made (not a delivery given up on a disabled endpoint)
}

// observe records the batch's outcome in the endpoint's failure streak (domain.Endpoint.Observe),
// writing only when the streak changes: a batch with any success ends it.
func (s *Service) observe(ctx context.Context, e domain.Endpoint, succeeded bool, log *slog.Logger) {
	now := s.now()
	probe := e
	if changed, _ := probe.Observe(succeeded, now); !changed {
		return
	}
	_, err := s.store.UpdateEndpoint(ctx, e.AppID, e.ID, func(cur *domain.Endpoint) ([]events.Event, error) {
		if _, disabled := cur.Observe(succeeded, now); !disabled {
			return nil, nil
		}
		log.WarnContext(ctx, "outbound: endpoint disabled after failing every attempt for five days",
			"app_id", cur.AppID, "endpoint_id", cur.ID, "failing_since", cur.FailingSince)
		ev, err := events.New(Source, outboundv1.EventEndpointDisabled, cur.AppID, &outboundv1.EndpointDisabled{
			AppId: cur.AppID, EndpointId: cur.ID, Url: cur.URL,
			FailingSince: cur.FailingSince.Format(time.RFC3339Nano), At: now.Format(time.RFC3339Nano)})
		if err != nil {
			return nil, err
		}
		return []events.Event{ev}, nil
	})
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		log.WarnContext(ctx, "outbound: recording an endpoint's failure streak failed", "endpoint_id", e.ID, "error", err.Error())
	}
}

// attempt makes one attempt of d and returns it with d's state after it. A disabled endpoint's
// delivery is given up rather than held for a re-enable (recovery sends it again).
func (s *Service) attempt(ctx context.Context, e domain.Endpoint, secrets []string, d domain.Delivery, log *slog.Logger) outcome {
	if e.Disabled {
		d.Attempts++
		d.Status = domain.StatusFailed
		return outcome{Recorded: Recorded{Delivery: d, Attempt: domain.Attempt{At: s.now(), Error: "endpoint disabled"}}, record: true}
	}
	at := s.now()
	sig, err := domain.Sign(d.ID, at, d.Body, secrets...)
	if err != nil {
		log.ErrorContext(ctx, "outbound: signing failed", "endpoint_id", e.ID, "error", err.Error())
		return outcome{}
	}
	a := s.sender.Send(ctx, e.URL, map[string]string{
		"Content-Type":      "application/json",
		"User-Agent":        "Berth-Webhooks/1",
		"Webhook-Id":        d.ID,
		"Webhook-Timestamp": strconv.FormatInt(at.Unix(), 10),
		"Webhook-Signature": sig,
	}, d.Body)
	a.At = at
	return outcome{Recorded: Recorded{Delivery: s.backoff.After(d, a), Attempt: a}, record: true, sent: true}
}

// openSecrets returns the endpoint's signing secrets: the current one, and the previous one while
// its rotation overlap lasts.
func (s *Service) openSecrets(e domain.Endpoint) ([]string, error) {
	cur, err := s.box.Open(e.Secret, e.ID)
	if err != nil {
		return nil, err
	}
	out := []string{string(cur)}
	if len(e.Previous) > 0 && s.now().Before(e.PreviousUntil) {
		prev, err := s.box.Open(e.Previous, e.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, string(prev))
	}
	return out, nil
}
