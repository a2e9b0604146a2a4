package locale

// german holds every message in German: the same keys as english (TestEveryMessageExistsInEveryLanguage).
// The pages and mails address the reader with "du", as Berth's German mails always have.
var german = map[string]string{
	"page.reference":         "Referenz: %s",
	"page.logoAlt":           "Logo von %s",
	"page.error.internal":    "Bei uns ist etwas schiefgegangen. Bitte versuche es gleich noch einmal.",
	"page.error.unavailable": "Dieser Dienst ist vorübergehend nicht erreichbar. Bitte versuche es gleich noch einmal.",

	"login.signIn.title":                "Anmelden",
	"login.signUp.title":                "Konto erstellen",
	"login.continueTo":                  "weiter zu %s",
	"login.name":                        "Name (optional)",
	"login.email":                       "E-Mail-Adresse",
	"login.password":                    "Passwort",
	"login.haveAccount":                 "Du hast schon ein Konto?",
	"login.newHere":                     "Neu hier?",
	"login.signInLink":                  "Anmelden",
	"login.signUpLink":                  "Konto erstellen",
	"login.error.title":                 "Anmeldung nicht möglich",
	"login.error.badLink":               "Dieser Anmeldelink ist ungültig. Kehre zur Anwendung zurück und beginne von vorn.",
	"login.error.badRequest":            "Die Anfrage konnte nicht verarbeitet werden. Kehre zur Anwendung zurück und beginne von vorn.",
	"login.error.expired":               "Das Formular ist abgelaufen. Bitte versuche es noch einmal.",
	"login.error.missing":               "Gib deine E-Mail-Adresse und dein Passwort ein.",
	"login.error.badCredentials":        "E-Mail-Adresse oder Passwort ist nicht korrekt.",
	"login.error.forbidden":             "Mit diesem Konto kannst du dich bei dieser Anwendung nicht anmelden.",
	"login.error.tooMany":               "Zu viele Versuche. Bitte warte einige Minuten und versuche es dann noch einmal.",
	"login.error.badEmail":              "Gib eine gültige E-Mail-Adresse ein.",
	"login.error.badName":               "Gib deinen Namen ohne Steuerzeichen ein.",
	"login.error.badPasswordCharacters": "Das Passwort enthält Zeichen, die nicht verwendet werden können (Steuerzeichen).",
	"login.error.badPassword":           "Wähle ein anderes Passwort: Dieses erfüllt die Passwortregeln nicht.",
	"login.error.signUpFailed":          "Mit diesen Angaben konnten wir kein Konto erstellen. Wenn du schon eines hast, melde dich stattdessen an.",
	"login.error.signInFailed":          "Mit diesen Angaben konnten wir dich nicht anmelden. Bitte versuche es noch einmal.",

	"pay.title":          "Zahlung",
	"pay.error.badLink":  "Dieser Zahlungslink ist ungültig. Kehre zur Anwendung zurück und beginne von vorn.",
	"pay.error.finished": "Dieser Bezahlvorgang ist bereits abgeschlossen. Kehre zur Anwendung zurück, um das Ergebnis zu sehen.",

	"invite.subject":    "Deine Einladung zu %s",
	"invite.greeting":   "Hallo,",
	"invite.invited":    "du bist eingeladen, %[1]s beizutreten. Die Einladung kommt von einem Nutzer von %[1]s, der diesen Namen angegeben hat:",
	"invite.createHere": "Hier kannst du dein Konto anlegen:",
	"invite.createLink": "Konto anlegen",
	"invite.validity":   "Die Einladung ist 30 Tage gültig. Wenn du den Absender nicht kennst, kannst du diese E-Mail ignorieren.",
}
