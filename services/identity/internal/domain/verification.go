package domain

import "github.com/berthhq/berth/pkg/fault"

// EmailVerification is an app's policy for addresses that have not proved they read their mail.
type EmailVerification string

const (
	// VerificationRequired means sign-up never signs in: the user proves the address by the mailed link
	// or code first, and a sign-in with the right password of an unverified user mails a fresh
	// one instead of signing in. Sign-up then answers the same for new and registered addresses,
	// so it reveals nothing about who has an account. The default for new apps.
	VerificationRequired EmailVerification = "required"
	// VerificationOptional means sign-up signs in at once and the mail verifies the address later. A
	// refused sign-up then tells the visitor that the address is registered.
	VerificationOptional EmailVerification = "optional"
)

// ParseEmailVerification reads a policy as the admin API and berthctl write it; "" selects the
// default for new apps (VerificationRequired).
func ParseEmailVerification(field, s string) (EmailVerification, error) {
	switch EmailVerification(s) {
	case "":
		return VerificationRequired, nil
	case VerificationRequired, VerificationOptional:
		return EmailVerification(s), nil
	}
	return "", fault.InvalidField(field, "must be %q or %q", VerificationRequired, VerificationOptional)
}
