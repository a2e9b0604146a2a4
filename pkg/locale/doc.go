// Package locale is what Berth's hosted pages and mails say, in each language Berth speaks
// (English and German), and the one rule choosing that language.
//
// # Choosing the language
//
// Choose is used everywhere: a page passes the request's `language` (or `lng`) parameter
// (Requested), its Accept-Language header and the app's default language (gateway/webpage.Language
// does that for a request); a mail passes the recipient's stored language and the app's default
// (in identity: Choose(user.Language, "", app.Branding.DefaultLanguage)). The first that names a
// language Berth speaks wins, else English.
// A parameter or stored value follows Normalize (en, de, or an ISO 3166-1 country code, because the
// published REST wrapper sends countries where a language is meant), and a BCP 47 tag such as
// de-CH is matched like an Accept-Language entry. Accept-Language is matched with its q-values by
// golang.org/x/text/language, so de-CH, de-AT;q=0.9 or gsw find German.
//
// # Messages
//
// Every text a hosted page or mail shows is a message in the catalog: en.go and de.go each map a
// key to that language's text. Keys are dotted, the area first ("login.email", "pay.title",
// "invite.subject", "page.reference" for what several pages share). A text may hold fmt verbs for
// the values the caller passes; use indexed verbs (%[1]s) when a language orders them differently.
// Templates call the printer their view carries: {{.T "login.email"}} or {{$.T "invite.body" .App}};
// Go code calls Printer.T the same way. Values are inserted as given: html/template escapes the
// whole result, so a message never holds markup.
//
// To add a message, add the key with its English text to en.go and its German text to de.go, and
// use it. TestEveryMessageExistsInEveryLanguage fails when one language lacks a key or the two
// texts take different values, and each page's tests run UnknownKeys over its templates, so a
// template that names a key the catalog lacks fails its package's tests too.
//
// # Why golang.org/x/text
//
// It is maintained with Go itself, is already in every module's graph, and brings the two pieces
// needed here: BCP 47 parsing and matching of Accept-Language (its Matcher knows that de-CH is
// German, and ranks by q-value), and message.Printer formatting each language's text from a
// catalog with positional arguments. go-i18n would add a dependency and message files for features
// (plural rules from CLDR files, translation workflows) that two languages of fixed texts do not use.
// The package knows no transport, so identity's domain uses it too.
package locale
