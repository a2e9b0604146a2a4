package app

import (
	"context"
	"errors"
	"strings"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// ApplyPspyPayment fetches a pspy payment with the connection's key and settles Berth's checkout
// of it. An unknown connection, or a payment Berth did not create, is ignored.
func (s *Service) ApplyPspyPayment(ctx context.Context, connectionID, paymentID string) (Applied, error) {
	connectionID = canonical(connectionID)
	if !isUUID(connectionID) || !strings.HasPrefix(paymentID, "tr_") || len(paymentID) > 64 {
		return Applied{Ignored: true}, nil
	}
	conn, err := s.store.Connection(ctx, connectionID)
	if errors.Is(err, domain.ErrConnectionNotFound) || (err == nil && conn.Provider != domain.Pspy) {
		return Applied{Ignored: true}, nil
	}
	if err != nil {
		return Applied{}, err
	}
	// The payment id tells nothing of its mode: ask with the test key first (what sandboxes and
	// apps in development use), then the live key. The provider answers another mode's or
	// another account's payment as not found.
	var p PspyPayment
	found := false
	for _, test := range []bool{true, false} {
		_, key, err := s.connectionKey(ctx, connectionID, test)
		if fault.Is(err, fault.KindPrecondition) {
			continue // no key of that mode
		}
		if err != nil {
			return Applied{}, err
		}
		if p, err = s.pspy.Payment(ctx, key, paymentID); err == nil {
			found = true
			break
		}
		var pe *ProviderError
		if !errors.As(err, &pe) || pe.Status != 404 {
			return Applied{}, providerFault(err, "fetch pspy payment")
		}
	}
	if !found {
		return Applied{Ignored: true}, nil
	}
	cs, own, err := s.ownCheckout(ctx, conn, p.Metadata[metaCheckout], p.ID)
	if err != nil {
		return Applied{}, err
	}
	if !own {
		return Applied{Ignored: true}, nil
	}
	before := cs.Status
	if cs, err = s.Settle(ctx, cs); err != nil {
		return Applied{}, err
	}
	out := Applied{Effect: changedTo("checkout", before, cs.Status)}
	if p.Status != "paid" {
		out.Status = p.Status
	}
	return out, nil
}
