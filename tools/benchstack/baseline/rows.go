package main

import "github.com/jackc/pgx/v5/pgtype"

// The rows are plain structs rendered by encoding/json, with the field names of the edge's
// answers, so the baseline's body is of the same shape and size as the stack's.

const userColumns = `id::text, app_id::text, language, salutation, salutation_other, accepted_newsletter,
	accepted_newsletter_date, last_asked_newsletter_sign_up, newsletter_member_id, name, given_name,
	family_name, middle_name, nickname, preferred_username, profile, picture, website, email,
	email_verified, gender, other_gender, birthdate, zoneinfo, locale, phone_number,
	phone_number_verified, frozen, deleted, tenant_id <> ''`

type user struct {
	Kind                      string `json:"kind,omitempty"`
	ID                        string `json:"id"`
	AppID                     string `json:"appId"`
	Language                  string `json:"language"`
	Salutation                string `json:"salutation"`
	SalutationOther           string `json:"salutationOther"`
	AcceptedNewsletter        bool   `json:"acceptedNewsletter"`
	AcceptedNewsletterDate    string `json:"acceptedNewsletterDate"`
	LastAskedNewsletterSignUp string `json:"lastAskedNewsletterSignUp"`
	NewsletterMemberID        string `json:"newsletterMemberId"`
	Name                      string `json:"name"`
	GivenName                 string `json:"given_name"`
	FamilyName                string `json:"family_name"`
	MiddleName                string `json:"middle_name"`
	Nickname                  string `json:"nickname"`
	PreferredUsername         string `json:"preferred_username"`
	Profile                   string `json:"profile"`
	Picture                   string `json:"picture"`
	Website                   string `json:"website"`
	Email                     string `json:"email"`
	EmailVerified             bool   `json:"email_verified"`
	Gender                    string `json:"gender"`
	OtherGender               string `json:"other_gender"`
	Birthdate                 string `json:"birthdate"`
	Zoneinfo                  string `json:"zoneinfo"`
	Locale                    string `json:"locale"`
	PhoneNumber               string `json:"phone_number"`
	PhoneNumberVerified       bool   `json:"phone_number_verified"`
	Frozen                    bool   `json:"freezed"`
	Deleted                   bool   `json:"deleted"`
	HasTenant                 bool   `json:"tenantId"`
}

// fields are the scan targets in userColumns' order.
func (u *user) fields() []any {
	return []any{&u.ID, &u.AppID, &u.Language, &u.Salutation, &u.SalutationOther, &u.AcceptedNewsletter,
		&u.AcceptedNewsletterDate, &u.LastAskedNewsletterSignUp, &u.NewsletterMemberID, &u.Name, &u.GivenName,
		&u.FamilyName, &u.MiddleName, &u.Nickname, &u.PreferredUsername, &u.Profile, &u.Picture, &u.Website, &u.Email,
		&u.EmailVerified, &u.Gender, &u.OtherGender, &u.Birthdate, &u.Zoneinfo, &u.Locale, &u.PhoneNumber,
		&u.PhoneNumberVerified, &u.Frozen, &u.Deleted, &u.HasTenant}
}

const tenantColumns = `t.id::text, t.name, t.pspx_customer_id, t.pspx_price_id, t.pspx_product_id,
	t.pspx_subscription_id, t.pspx_trialing_price_id, t.pspx_trialing_product_id,
	t.pspx_trialing_subscription_id, t.pspx_checkout_session_id, t.pspx_default_payment_method_id,
	t.pspx_subscription_cancel_at_period_end, t.pspx_subscription_cancel_at, t.pspx_payment_method, t.mode,
	t.description, t.pspx_one_time_payment_valid_thru, t.freezed_due_failed_payment, t.paid_until,
	t.free_until, t.paid_units, t.free_units, t.company_name, t.company_vat_id, t.company_tax_type,
	t.company_tax_exempt, t.is_business_customer, t.is_invoice_pending, t.freezed, t.payment_failed,
	t.payment_failed_count, t.payment_failed_date, t.deleted`

type tenant struct {
	Kind                              string   `json:"kind"`
	ID                                string   `json:"id"`
	Name                              string   `json:"name"`
	PspxCustomerID                    string   `json:"pspxCustomerId"`
	PspxPriceID                       string   `json:"pspxPriceId"`
	PspxProductID                     string   `json:"pspxProductId"`
	PspxSubscriptionID                string   `json:"pspxSubscriptionId"`
	PspxTrialingPriceID               string   `json:"pspxTrialingPriceId"`
	PspxTrialingProductID             string   `json:"pspxTrialingProductId"`
	PspxTrialingSubscriptionID        string   `json:"pspxTrialingSubscriptionId"`
	PspxCheckoutSessionID             string   `json:"pspxCheckoutSessionId"`
	PspxDefaultPaymentMethodID        string   `json:"pspxDefaultPaymentMethodId"`
	PspxSubscriptionCancelAtPeriodEnd bool     `json:"pspxSubscriptionCancelAtPeriodEnd"`
	PspxSubscriptionCancelAt          string   `json:"pspxSubscriptionCancelAt"`
	PspxPaymentMethod                 string   `json:"pspxPaymentMethod"`
	Mode                              string   `json:"mode"`
	Description                       string   `json:"description"`
	PspxOneTimePaymentValidThru       string   `json:"pspxOneTimePaymentValidThru"`
	FreezedDueFailedPayment           bool     `json:"freezedDueFailedPayment"`
	PaidUntil                         string   `json:"paidUntil"`
	FreeUntil                         string   `json:"freeUntil"`
	PaidUnits                         string   `json:"paidUnits"`
	FreeUnits                         string   `json:"freeUnits"`
	CompanyName                       string   `json:"companyName"`
	CompanyVATID                      string   `json:"companyVATId"`
	CompanyTaxType                    string   `json:"companyTaxType"`
	CompanyTaxExempt                  string   `json:"companyTaxExempt"`
	IsBusinessCustomer                bool     `json:"isBusinessCustomer"`
	IsInvoicePending                  bool     `json:"isInvoicePending"`
	Freezed                           bool     `json:"freezed"`
	PaymentFailed                     bool     `json:"paymentFailed"`
	PaymentFailedCount                int32    `json:"paymentFailedCount"`
	PaymentFailedDate                 string   `json:"paymentFailedDate"`
	Deleted                           bool     `json:"deleted"`
	Shipping                          *address `json:"shippingAddress"`
	Billing                           *address `json:"billingAddress"`
	Users                             []user   `json:"users"`
}

// fields are the scan targets in tenantColumns' order.
func (t *tenant) fields() []any {
	return []any{&t.ID, &t.Name, &t.PspxCustomerID, &t.PspxPriceID, &t.PspxProductID,
		&t.PspxSubscriptionID, &t.PspxTrialingPriceID, &t.PspxTrialingProductID,
		&t.PspxTrialingSubscriptionID, &t.PspxCheckoutSessionID, &t.PspxDefaultPaymentMethodID,
		&t.PspxSubscriptionCancelAtPeriodEnd, &t.PspxSubscriptionCancelAt, &t.PspxPaymentMethod, &t.Mode,
		&t.Description, &t.PspxOneTimePaymentValidThru, &t.FreezedDueFailedPayment, &t.PaidUntil,
		&t.FreeUntil, &t.PaidUnits, &t.FreeUnits, &t.CompanyName, &t.CompanyVATID, &t.CompanyTaxType,
		&t.CompanyTaxExempt, &t.IsBusinessCustomer, &t.IsInvoicePending, &t.Freezed, &t.PaymentFailed,
		&t.PaymentFailedCount, &t.PaymentFailedDate, &t.Deleted}
}

// addressColumns come from a left join: a tenant without addresses yields NULLs.
const addressColumns = `a.id::text, a.name, a.city, a.country, a.line1, a.line2, a.postal_code, a.state, a.type, a.deleted`

type address struct {
	ID         pgtype.Text `json:"id"`
	Name       pgtype.Text `json:"name"`
	City       pgtype.Text `json:"city"`
	Country    pgtype.Text `json:"country"`
	Line1      pgtype.Text `json:"line1"`
	Line2      pgtype.Text `json:"line2"`
	PostalCode pgtype.Text `json:"postal_code"`
	State      pgtype.Text `json:"state"`
	Type       pgtype.Text `json:"type"`
	Deleted    pgtype.Bool `json:"deleted"`
}

func (a *address) fields() []any {
	return []any{&a.ID, &a.Name, &a.City, &a.Country, &a.Line1, &a.Line2, &a.PostalCode, &a.State, &a.Type, &a.Deleted}
}
