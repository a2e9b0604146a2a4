package domain

import "slices"

// PublicTypes are the event types apps subscribe to, named resource.action. Package app derives
// each from Berth's internal events (app.Map); docs/webhooks.md documents them.
var PublicTypes = []string{
	"user.created", "user.updated", "user.deleted", "user.frozen", "user.unfrozen",
	"user.email_verified", "user.password_changed", "user.sessions_revoked",
	"tenant.created", "tenant.updated", "tenant.deleted", "tenant.frozen", "tenant.unfrozen",
	"subscription.started", "subscription.renewed", "subscription.changed", "subscription.cancelled",
	"subscription.ended", "payment.succeeded", "payment.failed", "promotion.redeemed", "referral.rewarded",
}

// IsPublicType reports whether t is one of PublicTypes.
func IsPublicType(t string) bool { return slices.Contains(PublicTypes, t) }
