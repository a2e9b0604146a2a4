package locale

// english holds every message in English, the language of every key (see doc.go for adding one).
var english = map[string]string{
	// Shared by the hosted pages.
	"page.reference":         "Reference: %s",
	"page.logoAlt":           "%s logo",
	"page.error.internal":    "Something went wrong on our side. Please try again in a moment.",
	"page.error.unavailable": "This service is temporarily unavailable. Please try again in a moment.",

	// The login page (gateway/login).
	"login.signIn.title":                "Sign in",
	"login.signUp.title":                "Create your account",
	"login.continueTo":                  "to continue to %s",
	"login.name":                        "Name (optional)",
	"login.email":                       "Email address",
	"login.password":                    "Password",
	"login.passwordRule":                "8 to 128 characters. Not a common password, and not your email address's name.",
	"login.haveAccount":                 "Already have an account?",
	"login.signInLink":                  "Sign in",
	"login.newHere":                     "New here?",
	"login.signUpLink":                  "Create an account",
	"login.error.title":                 "Sign-in unavailable",
	"login.error.badLink":               "This sign-in link is not valid. Go back to the application and start again.",
	"login.error.badRequest":            "The request could not be processed. Go back to the application and start again.",
	"login.error.expired":               "The form expired. Please try again.",
	"login.error.missing":               "Enter your email address and password.",
	"login.error.badCredentials":        "The email address or password is not correct.",
	"login.error.forbidden":             "This account cannot sign in to this application.",
	"login.error.tooMany":               "Too many attempts. Please wait a few minutes and try again.",
	"login.error.badEmail":              "Enter a valid email address.",
	"login.error.badName":               "Enter your name without control characters.",
	"login.error.badPasswordCharacters": "The password contains characters that cannot be used (control characters).",
	"login.error.badPassword":           "Choose a different password: this one does not meet the password rules.",
	"login.error.signUpFailed":          "We could not create an account with these details. If you already have one, sign in instead.",
	"login.error.signInFailed":          "We could not sign you in with these details. Please try again.",
	"login.error.passwordLength":        "Choose a password of 8 to 128 characters.",
	"login.error.passwordBlank":         "The password must not be only spaces.",
	"login.error.passwordCommon":        "This password is too common: it appears on lists of common and leaked passwords. Choose another.",
	"login.error.passwordEmail":         "The password must not contain your email address's name (the part before the @).",

	// The payment pages (gateway/pay).
	"pay.title":          "Payment",
	"pay.error.badLink":  "This payment link is not valid. Go back to the application and start again.",
	"pay.error.finished": "This checkout is already finished. Go back to the application to see its result.",

	// The referral invite mail (identity, route 23).
	"invite.subject":    "Your invitation to %s",
	"invite.greeting":   "Hello,",
	"invite.invited":    "you are invited to join %[1]s. The invitation was sent by a user of %[1]s who gave this name:",
	"invite.createHere": "Create your account here:",
	"invite.createLink": "Create your account",
	"invite.validity":   "The invitation is valid for 30 days. If you do not know the sender, you can ignore this email.",

	// The email-change confirmation page (gateway/emailchange).
	"emailChange.title":            "Confirm your new email address",
	"emailChange.forApp":           "for your account of %s",
	"emailChange.question":         "Use this address as the email address of your account?",
	"emailChange.confirm":          "Confirm",
	"emailChange.keepsOld":         "Until you confirm, your account keeps its old address.",
	"emailChange.done.title":       "Email address confirmed",
	"emailChange.done.body":        "%[1]s is now the email address of your account of %[2]s.",
	"emailChange.done.next":        "You can close this page and sign in with the new address.",
	"emailChange.error.title":      "Email change",
	"emailChange.error.badLink":    "This link is not valid any more: it was used, replaced by a newer one or has expired. Ask for the change again in the application.",
	"emailChange.error.badRequest": "The request could not be processed. Open the link from the email again.",
	"emailChange.error.expired":    "The form expired. Please press Confirm again.",

	// The email-change mails (identity, route 18 with a tenant access token).
	"emailChangeMail.greeting":        "Hello,",
	"emailChangeMail.confirm.subject": "Confirm your new email address for %s",
	"emailChangeMail.confirm.body":    "someone asked to use this address for an account of %s. To confirm that it is yours, open this link and press “Confirm”:",
	"emailChangeMail.confirm.link":    "Confirm the new address",
	"emailChangeMail.confirm.next":    "The link is valid for 24 hours and works once. Until it is used, the account keeps its old address. If you did not ask for this, ignore this email: nothing changes.",
	"emailChangeMail.taken.subject":   "Someone tried to use your email address at %s",
	"emailChangeMail.taken.body":      "someone asked to change the email address of an account of %s to this address. This address already belongs to your account there, so nothing was changed and your account is as it was.",
	"emailChangeMail.taken.next":      "If it was you, sign in with this address instead. If it was not, you can ignore this email.",
	"emailChangeMail.changed.subject": "The email address of your %s account was changed",
	"emailChangeMail.changed.body":    "the email address of your account of %s was changed to another address, which confirmed the change. This address is no longer used for the account.",
	"emailChangeMail.changed.next":    "If you did not make this change, contact the support of %s at once.",
}
