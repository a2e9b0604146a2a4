// Package rewards is billing's consumer of its own billing.tenant.first_paid events: each grants
// the app's referral reward to the tenant of whoever referred the tenant that first paid.
package rewards
