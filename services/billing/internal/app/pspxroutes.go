package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Routes 13 and 19–22 act on a tenant's pspx customer: its invoices, its subscription and its
// payment methods. They share the admission below; the charges (13) and plan changes (19) live in
// charges.go and plans.go.

var (
	errNotPspx         = fault.Precondition("This route is for apps connected to pspx; this app's checkouts use pspy")
	errNoSubscription  = fault.Precondition("The tenant has no subscription")
	errNoDefaultMethod = fault.Precondition("The tenant has no default payment method; set one up with a checkout in setup mode")
)

// pspxTenant is what those routes work on: a live tenant of the caller's app, its account, and the
// app's pspx connection opened for the request's mode.
type pspxTenant struct {
	conn   domain.Connection
	key    string
	test   bool
	tenant TenantRef
	acct   domain.Account
}

// TenantUser names the tenant and user a route acts for: the path's tenant, the body's copy of it
// (which must agree) and the user, required on routes 20–22.
type TenantUser struct {
	TenantID     string
	BodyTenantID string
	UserID       string
	UserRequired bool
	Test         bool
}

// admitPspx resolves a TenantUser: ids well-formed, the user one of the tenant's (users of other
// tenants and apps, deleted ones and absent ones answer alike), the tenant live, the app on pspx.
func (s *Service) admitPspx(ctx context.Context, callerApp string, r TenantUser) (pspxTenant, error) {
	tenantID := canonical(r.TenantID)
	switch {
	case !isUUID(tenantID):
		return pspxTenant{}, fault.InvalidField("tenantId", "must be a UUID")
	case r.BodyTenantID != "" && canonical(r.BodyTenantID) != tenantID:
		return pspxTenant{}, fault.InvalidField("tenantId", "must be the tenant of the path")
	case r.UserRequired && r.UserID == "":
		return pspxTenant{}, fault.InvalidField("userId", "is required")
	}
	if r.UserID != "" {
		userID := canonical(r.UserID)
		if !isUUID(userID) {
			return pspxTenant{}, fault.InvalidField("userId", "must be a UUID")
		}
		u, err := s.users.User(ctx, callerApp, userID)
		if fault.Is(err, fault.KindNotFound) || (err == nil && u.TenantID != tenantID) {
			return pspxTenant{}, fault.InvalidField("userId", "is not a user of this tenant")
		}
		if err != nil {
			return pspxTenant{}, err
		}
	}
	tenant, err := s.tenants.Tenant(ctx, callerApp, tenantID)
	if err != nil {
		return pspxTenant{}, err
	}
	conn, key, err := s.appConnection(ctx, callerApp, r.Test)
	if err != nil {
		return pspxTenant{}, err
	}
	if conn.Provider != domain.Pspx {
		return pspxTenant{}, errNotPspx
	}
	acct, err := s.store.Account(ctx, callerApp, tenant.ID)
	if err != nil {
		return pspxTenant{}, err
	}
	return pspxTenant{conn: conn, key: key, test: r.Test, tenant: tenant, acct: acct}, nil
}

// pspxCustomer is the tenant's pspx customer in the request's mode; found is false when Berth never
// created one (the tenant never paid in this mode).
func (s *Service) pspxCustomer(ctx context.Context, t pspxTenant) (c domain.Customer, found bool, err error) {
	c, err = s.store.Customer(ctx, t.conn.ID, t.tenant.ID, t.test)
	if errors.Is(err, domain.ErrCustomerNotFound) {
		return domain.Customer{}, false, nil
	}
	return c, err == nil, err
}

// InvoicePage is route 20's answer: the provider's invoice objects as sent, newest first.
type InvoicePage struct {
	Invoices []json.RawMessage
	HasMore  bool
}

// InvoiceQuery is route 20's query.
type InvoiceQuery struct {
	Tenant        TenantUser
	Limit         *int64 // nil: 100
	StartingAfter string
	EndingBefore  string // the query's startingbefore
}

// maxInvoicePage is route 20's page size: its default and its maximum.
const maxInvoicePage = 100

// ListInvoices is route 20: a page of the tenant's invoices at the provider. A tenant that never
// paid in this mode has none.
func (s *Service) ListInvoices(ctx context.Context, callerApp string, q InvoiceQuery) (InvoicePage, error) {
	limit := int64(maxInvoicePage)
	if q.Limit != nil {
		limit = *q.Limit
	}
	switch {
	case limit < 1 || limit > maxInvoicePage:
		return InvoicePage{}, fault.InvalidField("limit", "must be between 1 and %d", maxInvoicePage)
	case q.StartingAfter != "" && q.EndingBefore != "":
		return InvoicePage{}, fault.InvalidField("startingbefore", "cannot be combined with startingAfter")
	}
	for field, id := range map[string]string{"startingAfter": q.StartingAfter, "startingbefore": q.EndingBefore} {
		if id != "" {
			if err := domain.CheckProviderID(field, id); err != nil {
				return InvoicePage{}, err
			}
		}
	}
	q.Tenant.UserRequired = true
	t, err := s.admitPspx(ctx, callerApp, q.Tenant)
	if err != nil {
		return InvoicePage{}, err
	}
	cust, found, err := s.pspxCustomer(ctx, t)
	if err != nil || !found {
		return InvoicePage{Invoices: []json.RawMessage{}}, err
	}
	return s.pspxInvoices(ctx, t.key, PspxInvoiceQuery{Customer: cust.ID, Limit: int(limit),
		StartingAfter: q.StartingAfter, EndingBefore: q.EndingBefore})
}

// pspxInvoices is a page of a customer's invoices at pspx, as the provider sent them.
func (s *Service) pspxInvoices(ctx context.Context, key string, q PspxInvoiceQuery) (InvoicePage, error) {
	page, err := s.pspx.ListInvoices(ctx, key, q)
	if err != nil {
		return InvoicePage{}, providerFault(err, "list pspx invoices")
	}
	out := InvoicePage{HasMore: page.HasMore, Invoices: make([]json.RawMessage, 0, len(page.Invoices))}
	for _, inv := range page.Invoices {
		out.Invoices = append(out.Invoices, inv.Raw)
	}
	return out, nil
}

// DeletePaymentMethods is route 21: every payment method attached to the tenant's customer is
// detached (which clears the provider's default too) and the tenant's default is cleared. Each
// detach is keyed by the method, so a retried request repeats none.
func (s *Service) DeletePaymentMethods(ctx context.Context, callerApp string, r TenantUser) error {
	r.UserRequired = true
	t, err := s.admitPspx(ctx, callerApp, r)
	if err != nil {
		return err
	}
	cust, found, err := s.pspxCustomer(ctx, t)
	if err != nil {
		return err
	}
	if found {
		ids, err := s.pspx.PaymentMethods(ctx, t.key, cust.ID)
		if err != nil {
			return providerFault(err, "list pspx payment methods")
		}
		for _, id := range ids {
			if err := s.pspx.DetachPaymentMethod(ctx, t.key, "detach-"+id, id); err != nil {
				return providerFault(err, "detach pspx payment method")
			}
		}
	}
	_, err = s.updateAccount(ctx, callerApp, t.tenant.ID, "payment_methods.deleted", domain.Payment{},
		func(st domain.State) bool { return st.PspxDefaultPaymentMethodID != "" },
		(*domain.State).PaymentMethodsDeleted)
	return err
}

// CancelSubscription is route 22: the provider ends the subscription at the end of its paid
// period, and the tenant shows when. The subscription ends locally when the provider says it
// ended (its customer.subscription.deleted event).
func (s *Service) CancelSubscription(ctx context.Context, callerApp string, r TenantUser) error {
	r.UserRequired = true
	t, err := s.admitPspx(ctx, callerApp, r)
	if err != nil {
		return err
	}
	subID := t.acct.State.PspxSubscriptionID
	if subID == "" {
		return errNoSubscription
	}
	cancel := true
	sub, err := s.pspx.UpdateSubscription(ctx, t.key, "cancel-"+subID, subID, PspxSubscriptionUpdate{CancelAtPeriodEnd: &cancel})
	if err != nil {
		return providerFault(err, "cancel pspx subscription")
	}
	at := sub.CancelAt
	if at.IsZero() {
		at = sub.CurrentPeriodEnd
	}
	_, err = s.updateAccount(ctx, callerApp, t.tenant.ID, "subscription.cancel_at_period_end", domain.Payment{},
		func(st domain.State) bool {
			return st.PspxSubscriptionID == subID && (!st.PspxSubscriptionCancelAtPeriodEnd || !st.PspxSubscriptionCancelAt.Equal(at))
		},
		func(st *domain.State) { st.CancelsAtPeriodEnd(at) })
	return err
}
