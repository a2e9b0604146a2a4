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

// Runner settings. An endpoint's lane is sent in batches of at most perEndpoint, at most inFlight
// requests at a time, by a goroutine of its own, so one slow or dead endpoint holds only its own
// lane while every other endpoint's runs beside it.
const (
	claimLimit  = 512
	perEndpoint = 64
	inFlight    = 8
	// batchTime is the longest a batch can take: every attempt timing out.
	batchTime = perEndpoint / inFlight * domain.AttemptTimeout
	// lease covers a whole batch timing out, with room to record the attempts: a replica that dies
	// mid-batch gives its deliveries back after it (scaled with the schedule, so a test's killed
	// replica gives them back in its time).
	lease = batchTime + time.Minute
)

// Wake makes RunDeliveries claim now rather than at its next poll: a delivery was made due in this
// process without being handed to the runner.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// RunDeliveries sends due deliveries until ctx ends. Deliveries reach it two ways:
//
//   - handed off: the consumer that records a delivery leases it to this process's runner in the
//     same transaction, and hands it over once committed (PublishAll), so a new delivery costs no
//     claim;
//   - claimed: every poll interval, or at once after Wake, it claims due deliveries that no runner
//     holds: retries, those a consumer could not hand off (its lanes were full), and those of a
//     runner that stopped or died, once their lease ends.
//
// Either way a delivery joins its endpoint's lane, whose goroutine sends it in batches, so one slow
// or dead endpoint holds only its own lane. Replicas run side by side: a delivery is leased to
// one of them at a time, so no two send the same attempt. It returns when ctx ends and the sends
// in flight have been cut short; what waited in the lanes is given back to the claims.
func (s *Service) RunDeliveries(ctx context.Context, poll time.Duration, log *slog.Logger) {
	if s.sender == nil {
		panic("outbound: RunDeliveries needs a Sender")
	}
	if log == nil {
		log = slog.Default()
	}
	recordings := make(chan recording, 64)
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		s.recordAll(context.WithoutCancel(ctx), recordings, log)
	}()
	s.lanes.start(run{ctx: ctx, log: log, recordings: recordings})
	defer func() {
		s.giveBack(context.WithoutCancel(ctx), s.lanes.stop(), log)
		s.lanes.wait()
		close(recordings)
		<-recorded
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.wake:
		}
		skip := s.lanes.busy()
		ds, err := s.store.ClaimDue(ctx, Claim{Now: s.now(), Lease: s.backoff.Scaled(lease), Limit: claimLimit, PerEndpoint: perEndpoint, Skip: skip})
		if err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "outbound: claiming due deliveries failed; retrying at the next poll", "error", err.Error())
		}
		s.handOff(ctx, ds, log)
		if len(ds) >= claimLimit {
			s.Wake() // there may be more, of endpoints this claim did not reach
		}
		s.noteFull(ds)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(poll)
	}
}

// noteFull marks, for another claim when its lane ends, each endpoint the claim took its
// perEndpoint share of: more of its deliveries may be due.
func (s *Service) noteFull(ds []domain.Delivery) {
	n := map[string]int{}
	for _, d := range ds {
		if n[d.EndpointID]++; n[d.EndpointID] == perEndpoint {
			s.leftBehind(d.EndpointID)
		}
	}
}

// leftBehind notes that deliveries of endpoint wait in the store unleased (a consumer recorded them
// while the endpoint's lane was full, a lane refused them, or a claim took only its share): claims
// skip the endpoint while its lane runs, so the lane's end wakes the runner. If the endpoint has no
// lane, the runner is woken now.
func (s *Service) leftBehind(endpoint string) {
	if !s.lanes.leaveBehind(endpoint) {
		s.Wake()
	}
}

// leaseFrom is when a lease taken at now ends.
func (s *Service) leaseFrom(now time.Time) time.Time {
	return now.Add(s.backoff.Scaled(lease)).Truncate(time.Microsecond)
}

// handOff queues deliveries leased to this process on their endpoints' lanes, and gives back
// those the lanes refuse.
func (s *Service) handOff(ctx context.Context, ds []domain.Delivery, log *slog.Logger) {
	if len(ds) == 0 {
		return
	}
	s.giveBack(ctx, s.lanes.push(ds, s.sendLane), log)
}

// giveBack ends the leases of deliveries this process holds but will not send, so the next claim
// (of any replica) takes them. If that fails they come back when their leases end.
func (s *Service) giveBack(ctx context.Context, ds []domain.Delivery, log *slog.Logger) {
	if len(ds) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := s.store.RenewLeases(ctx, ds, time.Time{}); err != nil {
		log.WarnContext(ctx, "outbound: giving back leased deliveries failed; they are sent when their lease ends",
			"deliveries", len(ds), "error", err.Error())
		return
	}
	for _, d := range ds {
		s.leftBehind(d.EndpointID)
	}
}

// sendLane sends the endpoint's lane batch after batch until it is empty, then wakes the runner if
// deliveries of the endpoint were left in the store meanwhile (leftBehind).
func (s *Service) sendLane(r run, endpoint string) {
	ctx, log := r.ctx, r.log
	for {
		batch, behind := s.lanes.next(endpoint, perEndpoint)
		if batch == nil {
			if behind {
				s.Wake()
			}
			return
		}
		if batch = s.holdLeases(ctx, batch, log); len(batch) > 0 {
			s.sendBatch(r, batch)
		}
	}
}

// holdLeases renews the leases that would end before the batch could be sent (they waited in the
// lane behind a slow endpoint), and returns the batch without those this process no longer holds.
func (s *Service) holdLeases(ctx context.Context, batch []domain.Delivery, log *slog.Logger) []domain.Delivery {
	now := s.now()
	need := now.Add(s.backoff.Scaled(batchTime))
	var keep, renew []domain.Delivery
	for _, d := range batch {
		if d.LeaseUntil.Before(need) {
			renew = append(renew, d)
		} else {
			keep = append(keep, d)
		}
	}
	if len(renew) == 0 {
		return batch
	}
	renewed, err := s.store.RenewLeases(ctx, renew, s.leaseFrom(now))
	if err != nil {
		log.WarnContext(ctx, "outbound: renewing leases failed; those deliveries are sent when their lease ends",
			"deliveries", len(renew), "error", err.Error())
	}
	return append(keep, renewed...)
}

// sendBatch sends one endpoint's batch, at most inFlight at a time, and passes the outcomes on to
// be recorded, beside the lane's next batch. The endpoint is read once: a batch is sent with the
// URL and secrets it had when the batch began.
func (s *Service) sendBatch(r run, ds []domain.Delivery) {
	ctx, log := r.ctx, r.log
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
	if ctx.Err() != nil {
		// Stopping: the requests were cut short, so their outcomes are not the receiver's. Nothing
		// is recorded; the deliveries come back when their lease ends (at least once).
		return
	}
	// The deliveries stay leased until their outcomes are recorded, even if stopping begins now.
	r.recordings <- recording{endpoint: e, outcomes: outcomes}
}

// recording is a sent batch's outcomes, waiting to be recorded.
type recording struct {
	endpoint domain.Endpoint
	outcomes []outcome
}

// recordLimit is at most how many attempts one write records.
const recordLimit = 1024

// recordAll records the batches that lanes send until in is closed. It writes what is waiting
// when it is ready, never waiting for more, in one statement: while a write is in flight the next
// batches gather, so the lanes' many small batches share a few writes (and a few commits).
func (s *Service) recordAll(ctx context.Context, in <-chan recording, log *slog.Logger) {
	for first := range in {
		batch, n := []recording{first}, len(first.outcomes)
	gather:
		for n < recordLimit {
			select {
			case r, ok := <-in:
				if !ok {
					break gather
				}
				batch, n = append(batch, r), n+len(r.outcomes)
			default:
				break gather
			}
		}
		s.record(ctx, batch, log)
	}
}

// record stores the batches' attempts in one write, then updates each endpoint's failure streak.
func (s *Service) record(ctx context.Context, batch []recording, log *slog.Logger) {
	var rs []Recorded
	for _, r := range batch {
		for _, o := range r.outcomes {
			if o.record {
				rs = append(rs, o.Recorded)
			}
		}
	}
	if err := s.store.RecordAttempts(ctx, rs...); err != nil {
		log.WarnContext(ctx, "outbound: recording attempts failed; the deliveries are sent again when their lease ends",
			"attempts", len(rs), "error", err.Error())
		return
	}
	for _, r := range batch {
		var succeeded, failed bool
		for _, o := range r.outcomes {
			switch {
			case !o.record || !o.sent:
			case o.Attempt.Succeeded():
				succeeded = true
			default:
				failed = true
			}
		}
		if succeeded || failed {
			s.observe(ctx, r.endpoint, succeeded, log)
		}
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
