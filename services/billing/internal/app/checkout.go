package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Route 10 and the two hosted pages around the provider's checkout:
//
//	app ──route 10──▶ billing ──create──▶ provider          (session stored, open)
//	browser ──/pay?…&state──▶ edge ──OpenCheckout──▶ billing: link checked ──303──▶ provider page
//	provider ──303──▶ /pay/return ──ReturnCheckout──▶ billing: fetch provider object, settle once
//	         ──303──▶ app's payment return URL ?state&session_id&status
//
// The return page fetches the provider's object itself, so a lost webhook cannot leave the tenant
// wrong, and settles the session in the same transaction as the account change, so a second
// return (or the webhook, later) finds it settled and applies nothing.

var (
	errNoConnection = fault.Precondition("The app has no payment provider connected")
	errBadPayLink   = fault.NotFound("This payment link is not valid")
	errCheckoutOver = fault.Precondition("This checkout is finished")
)

// CreateCheckout is route 10 for the tenant of the caller's app: it validates the body, creates
// the provider's checkout for the tenant's provider customer and stores Berth's session. The
// answer is the session and its hosted payment page URL (to which the caller appends &state=).
// payer is the user whose tenant access token asks for it, "" for an API key: the money events of
// its payment name them.
func (s *Service) CreateCheckout(ctx context.Context, callerApp, tenantID, payer string, req domain.CheckoutRequest) (domain.CheckoutSession, string, error) {
	tenantID = canonical(tenantID)
	if !isUUID(tenantID) {
		return domain.CheckoutSession{}, "", fault.InvalidField("tenantId", "must be a UUID")
	}
	if err := req.Validate(); err != nil {
		return domain.CheckoutSession{}, "", err
	}
	tenant, err := s.tenants.Tenant(ctx, callerApp, tenantID)
	if err != nil {
		return domain.CheckoutSession{}, "", err
	}
	conn, key, err := s.appConnection(ctx, callerApp, req.Test)
	if err != nil {
		return domain.CheckoutSession{}, "", err
	}
	now := s.now()
	cs := domain.CheckoutSession{
		ID: s.newID(), AppID: callerApp, TenantID: tenant.ID, ConnectionID: conn.ID, Provider: conn.Provider, UserID: payer,
		Test: req.Test, Mode: req.Mode, Price: req.Price, TaxRate: req.TaxRate, Quantity: req.Quantity, Method: req.PaymentMethodType,
		Hash: randomHex(32), StateHash: domain.HashState(req.State), Status: domain.CheckoutOpen, CreatedAt: now, UpdatedAt: now,
	}
	if cs.Mode == domain.ModeSetup {
		cs.Quantity = 0
	}
	if conn.Provider == domain.Pspx {
		err = s.pspxCheckout(ctx, key, tenant, req, &cs)
	} else {
		err = s.pspyCheckout(ctx, key, tenant, req, &cs)
	}
	if err != nil {
		return domain.CheckoutSession{}, "", err
	}
	if err := s.store.CreateCheckout(ctx, cs); err != nil {
		return domain.CheckoutSession{}, "", err
	}
	return cs, s.payURL(cs), nil
}

// appConnection is the connection the app's checkouts and charges use, with its key for the mode
// opened.
func (s *Service) appConnection(ctx context.Context, appID string, test bool) (domain.Connection, string, error) {
	st, err := s.store.Settings(ctx, appID)
	if err != nil {
		return domain.Connection{}, "", err
	}
	if st.ConnectionID == "" {
		return domain.Connection{}, "", errNoConnection
	}
	return s.connectionKey(ctx, st.ConnectionID, test)
}

// connectionKey opens the connection's secret key for the mode.
func (s *Service) connectionKey(ctx context.Context, connectionID string, test bool) (domain.Connection, string, error) {
	conn, err := s.store.Connection(ctx, connectionID)
	if errors.Is(err, domain.ErrConnectionNotFound) {
		return domain.Connection{}, "", errNoConnection
	}
	if err != nil {
		return domain.Connection{}, "", err
	}
	sealed, role, mode := conn.LiveKey, "live", "live"
	if test {
		sealed, role, mode = conn.TestKey, "test", "test"
	}
	if sealed == nil {
		return domain.Connection{}, "", fault.Precondition("The app's payment provider connection has no %s mode key", mode)
	}
	key, err := s.box.Open(sealed, conn.ID+"/"+role)
	if err != nil {
		return domain.Connection{}, "", fault.Internal(fmt.Errorf("open %s key of connection %s: %w", role, conn.ID, err))
	}
	return conn, string(key), nil
}

// customerMetadata tags a provider customer with Berth's ids and this deployment's host (the
// webhook ingest reads them back).
func (s *Service) customerMetadata(appID, tenantID string) map[string]string {
	return map[string]string{"appId": appID, "tenantId": tenantID, "host": s.host}
}

// customer returns the tenant's provider customer on the connection and mode, creating it on
// first use. The idempotency key names the tenant, connection and mode, so racing checkouts get
// the provider's one customer, and the store keeps the first it is told of.
func (s *Service) customer(ctx context.Context, cs *domain.CheckoutSession, create func(idem string) (string, error)) error {
	c, err := s.store.Customer(ctx, cs.ConnectionID, cs.TenantID, cs.Test)
	if err == nil {
		cs.CustomerID = c.ID
		return nil
	}
	if !errors.Is(err, domain.ErrCustomerNotFound) {
		return err
	}
	id, err := create(fmt.Sprintf("customer-%s-%s-%t", cs.ConnectionID, cs.TenantID, cs.Test))
	if err != nil {
		return err
	}
	c, err = s.store.SaveCustomer(ctx, domain.Customer{ID: id, ConnectionID: cs.ConnectionID, AppID: cs.AppID,
		TenantID: cs.TenantID, Test: cs.Test, CreatedAt: s.now()})
	cs.CustomerID = c.ID
	return err
}

// payURL is Berth's hosted payment page for a session, in the form the browser SDK builds too.
func (s *Service) payURL(cs domain.CheckoutSession) string {
	return s.publicURL + "/pay?client_id=" + url.QueryEscape(cs.AppID) + "&type=payment&session_id=" +
		url.QueryEscape(cs.ID) + "&hash=" + url.QueryEscape(cs.Hash)
}

// returnPage is where the provider sends the payer back, for every outcome.
func (s *Service) returnPage(cs domain.CheckoutSession) string {
	return s.publicURL + "/pay/return?session_id=" + url.QueryEscape(cs.ID)
}

// OpenCheckout is the hosted payment page's check: the link's app, session, hash and state must
// be the session's (compared in constant time; every mismatch answers alike). It names the
// provider's page while the session is open.
func (s *Service) OpenCheckout(ctx context.Context, clientID, sessionID, hash, state string) (string, error) {
	cs, err := s.store.Checkout(ctx, canonical(sessionID))
	if errors.Is(err, domain.ErrCheckoutNotFound) {
		return "", errBadPayLink
	}
	if err != nil {
		return "", err
	}
	opens := cs.Opens(hash, state)
	if !opens || cs.AppID != canonical(clientID) {
		return "", errBadPayLink
	}
	if cs.Status != domain.CheckoutOpen {
		return "", errCheckoutOver
	}
	return cs.ProviderURL, nil
}

// ReturnCheckout runs when the provider sends the payer back: it settles the session from the
// provider's object and answers the app's payment return URL with state (when the browser still
// holds the one the session was created with), session_id and status.
func (s *Service) ReturnCheckout(ctx context.Context, sessionID, state string) (string, string, error) {
	cs, err := s.store.Checkout(ctx, canonical(sessionID))
	if errors.Is(err, domain.ErrCheckoutNotFound) {
		return "", "", errBadPayLink
	}
	if err != nil {
		return "", "", err
	}
	cs, published, err := s.settle(ctx, cs)
	if err != nil {
		return "", "", err
	}
	// The provider's webhook may have settled the session a moment before the payer came back,
	// and its push to the tenant context still be on its way. The app reads route 5 as soon as
	// the payer lands, so push the account from here too (tenant keeps each revision once).
	if !published && cs.Status == domain.CheckoutCompleted {
		acct, err := s.store.Account(ctx, cs.AppID, cs.TenantID)
		if err == nil {
			err = s.publish(ctx, acct)
		}
		if err != nil {
			return "", "", err
		}
	}
	target, err := s.paymentReturnURL(ctx, cs.AppID)
	if err != nil {
		return "", "", err
	}
	q := target.Query()
	if state != "" && cs.HoldsState(state) {
		q.Set("state", state)
	}
	q.Set("session_id", cs.ID)
	q.Set("status", cs.Status)
	target.RawQuery = q.Encode()
	return target.String(), cs.Status, nil
}

// paymentReturnURL is the app's payment return URL setting, else its first redirect URI.
func (s *Service) paymentReturnURL(ctx context.Context, appID string) (*url.URL, error) {
	st, err := s.store.Settings(ctx, appID)
	if err != nil {
		return nil, err
	}
	raw := st.PaymentReturnURL
	if raw == "" {
		a, err := s.users.App(ctx, appID)
		if err != nil {
			return nil, err
		}
		raw = a.FirstRedirectURI
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return nil, fault.Precondition("The app has no payment return URL")
	}
	return u, nil
}

// outcome is what the provider's object says of a session: its next status and, when paid, the
// effect on the tenant's billing state.
type outcome struct {
	status string
	apply  func(*domain.State)
	paid   domain.Payment // the amount the provider collected, for the money events
}

// Settle brings an unsettled session up to date with the provider and applies its effect once.
// Provider calls that complete the effect (a default payment method, a pspy subscription or
// refund) run before the transaction with idempotency keys of the session, so a retry repeats
// none of them; the account change and the session's new status then commit together.
func (s *Service) Settle(ctx context.Context, cs domain.CheckoutSession) (domain.CheckoutSession, error) {
	cs, _, err := s.settle(ctx, cs)
	return cs, err
}

// settle is Settle, also saying whether this call changed the account and pushed it to tenant.
func (s *Service) settle(ctx context.Context, cs domain.CheckoutSession) (domain.CheckoutSession, bool, error) {
	if cs.Settled() {
		return cs, false, nil
	}
	_, key, err := s.connectionKey(ctx, cs.ConnectionID, cs.Test)
	if err != nil {
		return domain.CheckoutSession{}, false, err
	}
	var out outcome
	if cs.Provider == domain.Pspx {
		out, err = s.pspxOutcome(ctx, key, cs)
	} else {
		out, err = s.pspyOutcome(ctx, key, cs)
	}
	if err != nil {
		return domain.CheckoutSession{}, false, err
	}
	if out.status == cs.Status {
		return cs, false, nil
	}
	now := s.now()
	changed := false
	settled, acct, err := s.store.SettleCheckout(ctx, cs.ID, func(c *domain.CheckoutSession, a *domain.Account) ([]events.Event, error) {
		if c.Settled() || c.Status == out.status {
			return nil, nil // settled meanwhile (another return, or the webhook)
		}
		c.Status, c.UpdatedAt = out.status, now
		if out.apply == nil {
			return nil, nil
		}
		changed = true
		return changeState(a, now, "checkout."+c.Mode, domain.Payment{ID: c.ProviderSessionID, UserID: c.UserID, PriceID: c.Price,
			Amount: out.paid.Amount, Currency: out.paid.Currency}, out.apply)
	})
	if err != nil {
		return domain.CheckoutSession{}, false, err
	}
	if changed {
		if err := s.publish(ctx, acct); err != nil {
			return domain.CheckoutSession{}, false, err
		}
	}
	return settled, changed, nil
}

// oneTimeValidThru is when units bought now stop being valid (an app setting, in days).
func (s *Service) oneTimeValidThru(ctx context.Context, appID string, paidAt time.Time) (time.Time, error) {
	st, err := s.store.Settings(ctx, appID)
	if err != nil {
		return time.Time{}, err
	}
	return paidAt.AddDate(0, 0, int(st.OneTimePaymentValidDays)), nil
}

// providerFault answers a provider's error: what the provider blamed on the request is the
// caller's 400 with the provider's user-facing message; anything else is Berth's 500, its cause
// logged, never shown. Either keeps the provider's error as its cause, which the callers' message
// never shows, so a provider event's effect can still tell a refusal for good (rejected).
func providerFault(err error, what string) error {
	var pe *ProviderError
	if errors.As(err, &pe) && pe.CallerFault() {
		return fault.Invalid(pe.Param, "%s", pe.UserMessage).Wrap(err)
	}
	return fault.Internal(fmt.Errorf("%s: %w", what, err))
}
