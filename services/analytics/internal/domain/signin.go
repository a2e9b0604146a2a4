package domain

import "time"

// SignIn is one successful sign-in of a user, as identity reported it.
type SignIn struct {
	ID        string // the id of the identity.user.signed_in event, so a redelivery maps to the same sign-in
	AppID     string
	UserID    string
	TenantRef string // the user's tenant at sign-in time; "" when it had none
	At        time.Time
	IP        string
}
