package app

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// Runner settings. A claimed endpoint's batch is sent in order by one goroutine, so one slow or
// dead endpoint holds only its own goroutine while every other endpoint's run beside it.
const (
	claimLimit  = 256
	perEndpoint = 16
	// lease covers a whole endpoint batch timing out, with room to record the attempts: a
	// replica that dies mid-batch gives its deliveries back after it.
	lease = perEndpoint*domain.AttemptTimeout + time.Minute
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
// once after Wake) and sends each endpoint's claimed deliveries in order on a goroutine of that
// endpoint's own. Replicas run it side by side: a claim leases its deliveries, so no two send the
// same attempt. It returns when ctx ends and every send in flight has been recorded.
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
		ds, err := s.store.ClaimDue(ctx, Claim{Now: s.now(), Lease: lease, Limit: claimLimit, PerEndpoint: perEndpoint, Skip: skip})
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
			wg.Go(func() {
				defer func() {
					mu.Lock()
					delete(busy, id)
					mu.Unlock()
					s.Wake() // the endpoint may have more due
				}()
				s.sendBatch(context.WithoutCancel(ctx), byEndpoint[id], log)
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

// sendBatch sends one endpoint's claimed deliveries in order. The endpoint is read once: a batch
// is sent with the URL and secrets it had when the batch began.
func (s *Service) sendBatch(ctx context.Context, ds []domain.Delivery, log *slog.Logger) {
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
	var succeeded, failed bool
	for _, d := range ds {
		switch ok, tried := s.send(ctx, e, secrets, d, log); {
		case !tried:
		case ok:
			succeeded = true
		default:
			failed = true
		}
	}
	if succeeded || failed {
		s.observe(ctx, e, succeeded, log)
	}
}

// observe records the batch's outcome in the endpoint's failure streak (domain.Endpoint.Observe),
// writing only when the streak changes: a batch with any success ends it.
func (s *Service) observe(ctx context.Context, e domain.Endpoint, succeeded bool, log *slog.Logger) {
	now := s.now()
	probe := e
	if changed, _ := probe.Observe(succeeded, now); !changed {
		return
	}
	_, err := s.store.UpdateEndpoint(ctx, e.AppID, e.ID, func(cur *domain.Endpoint) error {
		if changed, disabled := cur.Observe(succeeded, now); changed && disabled {
			log.WarnContext(ctx, "outbound: endpoint disabled after failing every attempt for five days",
				"app_id", cur.AppID, "endpoint_id", cur.ID, "failing_since", cur.FailingSince)
		}
		return nil
	})
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		log.WarnContext(ctx, "outbound: recording an endpoint's failure streak failed", "endpoint_id", e.ID, "error", err.Error())
	}
}

// send makes one attempt of d and records it; tried is false when no request was made (the
// endpoint disabled, signing impossible), ok whether the receiver took it.
func (s *Service) send(ctx context.Context, e domain.Endpoint, secrets []string, d domain.Delivery, log *slog.Logger) (ok, tried bool) {
	var a domain.Attempt
	if e.Disabled {
		// Disabled after the delivery was recorded: it is given up, not held for a re-enable.
		a = domain.Attempt{At: s.now(), Error: "endpoint disabled"}
		d.Attempts++
		d.Status = domain.StatusFailed
	} else {
		at := s.now()
		sig, err := domain.Sign(d.ID, at, d.Body, secrets...)
		if err != nil {
			log.ErrorContext(ctx, "outbound: signing failed", "endpoint_id", e.ID, "error", err.Error())
			return false, false
		}
		a = s.sender.Send(ctx, e.URL, map[string]string{
			"Content-Type":      "application/json",
			"User-Agent":        "Berth-Webhooks/1",
			"Webhook-Id":        d.ID,
			"Webhook-Timestamp": strconv.FormatInt(at.Unix(), 10),
			"Webhook-Signature": sig,
		}, d.Body)
		a.At = at
		d = s.backoff.After(d, a)
		ok, tried = a.Succeeded(), true
	}
	if err := s.store.RecordAttempt(ctx, d, a); err != nil {
		log.WarnContext(ctx, "outbound: recording an attempt failed; the delivery is sent again when its lease ends",
			"delivery_id", d.ID, "error", err.Error())
	}
	return ok, tried
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
