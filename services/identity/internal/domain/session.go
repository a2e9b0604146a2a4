package domain

// MaxUserAgent is the longest User-Agent a session keeps, in characters. Browsers send 100-300;
// the hosted login page cuts a longer header to this before it signs anyone in, since the value
// only describes the session to its user.
const MaxUserAgent = 512

// CheckUserAgent validates the User-Agent a sign-in records with its session: single-line text
// (it is shown to the user and written to logs) of at most MaxUserAgent characters.
func CheckUserAgent(ua string) error { return checkText("user_agent", ua, MaxUserAgent) }

// Reasons a user's sessions were revoked, as the sessions-revoked event carries them.
const (
	RevokedByUserRequest = "user_request"
	RevokedFrozen        = "frozen"
	RevokedDeleted       = "deleted"
	// RevokedTokenReuse: a refresh token was shown again after its rotation, so two parties hold
	// the session (one of them a thief) and it ends for both.
	RevokedTokenReuse = "token_reuse"
	// RevokedPasswordChanged: the user changed the password on the hosted account page; whoever
	// held a session with the old one loses it.
	RevokedPasswordChanged = "password_changed"
	// RevokedPasswordReset: the password was reset by a mail's link or code, which ends every
	// session the old password opened.
	RevokedPasswordReset = "password_reset"
	// RevokedSecondFactorsRemoved: an operator or the app's server removed the user's second
	// factors (a lost authenticator, or a taken-over account).
	RevokedSecondFactorsRemoved = "second_factors_removed"
	// RevokedKeyRotated: an operator rotated the app's signing key, which ends every session of
	// the app.
	RevokedKeyRotated = "key_rotated"
)

// Session is one of a user's sessions as the sessions routes show it: a live refresh family.
type Session struct {
	RefreshFamily
	// Current is true for the session of the calling access token.
	Current bool
}
