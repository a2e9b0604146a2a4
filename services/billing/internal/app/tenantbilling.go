package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// What a tenant's money page shows at most: its newest payments, invoices and grants. Operators
// look at a tenant's recent money; its whole history is in the provider's dashboard and the events.
const (
	tenantPayments = 100
	tenantInvoices = 20
	tenantGrants   = 100
)

// A Payment's sources.
const (
	paymentCheckout = "checkout"
	paymentCharge   = "charge"
)

// Payment is a payment Berth started for a tenant: a hosted checkout or a charge.
type Payment struct {
	ID       string
	Source   string // "checkout" or "charge"
	Kind     string // a checkout's mode or a charge's kind
	Test     bool
	Price    string
	TaxRate  string
	Quantity int64
	Amount   int64 // an upgrade's prorated amount
	Status   string
	UserID   string
	Created  time.Time
	Updated  time.Time
}

// TenantBilling is a tenant's money as its app's operators see it.
type TenantBilling struct {
	Account  domain.Account
	Payments []Payment
	Invoices InvoicePage
	Grants   []domain.PromotionUse
}

// GetTenantBilling gathers a live tenant's billing state, its newest checkouts and charges, the
// provider's newest invoices in the mode test names (pspx apps; none for pspy, which has no
// invoices, or before the tenant paid in that mode) and the promotions it received.
func (s *Service) GetTenantBilling(ctx context.Context, appID, tenantID string, test bool) (TenantBilling, error) {
	appID, tenantID = canonical(appID), canonical(tenantID)
	switch {
	case !isUUID(appID):
		return TenantBilling{}, fault.InvalidField("appId", "must be a UUID")
	case !isUUID(tenantID):
		return TenantBilling{}, fault.InvalidField("tenantId", "must be a UUID")
	}
	tenant, err := s.tenants.Tenant(ctx, appID, tenantID)
	if err != nil {
		return TenantBilling{}, err
	}
	var out TenantBilling
	if out.Account, err = s.store.Account(ctx, appID, tenant.ID); err != nil {
		return TenantBilling{}, err
	}
	if out.Payments, err = s.payments(ctx, appID, tenant.ID); err != nil {
		return TenantBilling{}, err
	}
	if out.Grants, err = s.store.TenantPromotionUses(ctx, appID, tenant.ID, tenantGrants); err != nil {
		return TenantBilling{}, err
	}
	if out.Invoices, err = s.tenantInvoices(ctx, appID, tenant.ID, test); err != nil {
		return TenantBilling{}, err
	}
	return out, nil
}

// payments merges the tenant's newest checkouts and charges, newest first.
func (s *Service) payments(ctx context.Context, appID, tenantID string) ([]Payment, error) {
	checkouts, err := s.store.TenantCheckouts(ctx, appID, tenantID, tenantPayments)
	if err != nil {
		return nil, err
	}
	charges, err := s.store.TenantCharges(ctx, appID, tenantID, tenantPayments)
	if err != nil {
		return nil, err
	}
	out := make([]Payment, 0, len(checkouts)+len(charges))
	for _, c := range checkouts {
		out = append(out, Payment{ID: c.ID, Source: paymentCheckout, Kind: c.Mode, Test: c.Test, Price: c.Price, TaxRate: c.TaxRate,
			Quantity: c.Quantity, Status: c.Status, UserID: c.UserID, Created: c.CreatedAt, Updated: c.UpdatedAt})
	}
	for _, c := range charges {
		out = append(out, Payment{ID: c.ID, Source: paymentCharge, Kind: c.Kind, Test: c.Test, Price: c.Price, TaxRate: c.TaxRate,
			Quantity: c.Quantity, Amount: c.Amount, Status: c.Status, UserID: c.UserID, Created: c.CreatedAt, Updated: c.UpdatedAt})
	}
	slices.SortFunc(out, func(a, b Payment) int {
		return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(b.ID, a.ID))
	})
	return out[:min(len(out), tenantPayments)], nil
}

// tenantInvoices is the provider's newest invoices of the tenant's customer on the app's pspx
// connection in the mode; none when the app uses pspy or no connection, or Berth never created
// the tenant a customer there (no provider call is made then).
func (s *Service) tenantInvoices(ctx context.Context, appID, tenantID string, test bool) (InvoicePage, error) {
	none := InvoicePage{Invoices: []json.RawMessage{}}
	st, err := s.store.Settings(ctx, appID)
	if err != nil || st.ConnectionID == "" {
		return none, err
	}
	conn, err := s.store.Connection(ctx, st.ConnectionID)
	if err != nil || conn.Provider != domain.Pspx {
		return none, err
	}
	cust, err := s.store.Customer(ctx, conn.ID, tenantID, test)
	if errors.Is(err, domain.ErrCustomerNotFound) {
		return none, nil
	}
	if err != nil {
		return none, err
	}
	_, key, err := s.connectionKey(ctx, conn.ID, test)
	if err != nil {
		return none, err
	}
	return s.pspxInvoices(ctx, key, PspxInvoiceQuery{Customer: cust.ID, Limit: tenantInvoices})
}
