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
}
