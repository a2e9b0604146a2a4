package domain

import "github.com/berthhq/berth/pkg/fault"

// Not-found answers. Routes answer them like invalid input (400 in the /v1 family), so ids of
// other apps cannot be probed.
var (
	ErrConnectionNotFound = fault.NotFound("Provider connection not found")
	ErrPromotionNotFound  = fault.NotFound("Promotion not found")
	ErrCheckoutNotFound   = fault.NotFound("Checkout session not found")
	ErrCustomerNotFound   = fault.NotFound("Customer not found")
	ErrChargeNotFound     = fault.NotFound("Charge not found")
	// ErrChargePending refuses a second upgrade while one waits for its invoice.
	ErrChargePending = fault.Precondition("A plan upgrade is waiting for its invoice to be paid")
	// ErrSubscriptionPending refuses a second subscription while one is being charged.
	ErrSubscriptionPending = fault.Precondition("A subscription of this tenant is being charged")
	ErrCodeTaken           = fault.InvalidField("code", "is already a promotion code of this app")
	// ErrReferralRewarded says a referred tenant's first payment earned its referrer's reward
	// before: the reward is granted once per referred tenant.
	ErrReferralRewarded = fault.Precondition("The referral reward for this tenant was granted before")
)
