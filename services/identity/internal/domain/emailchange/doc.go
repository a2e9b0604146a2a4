// Package emailchange renders the three mails of an email change asked for with the user's own
// token (route 18): the confirmation link to the new address, the notice to an address that
// already has an account ("someone tried to use your address"), and the notice to the old address
// once the change is done. Each has a text and an HTML part, in English or German from the
// messages of pkg/locale, in the app's branding; the HTML part goes through html/template.
// Subjects and links carry no user-chosen text: only the app's (display) name, which its operator
// chose, and links to the deployment's public URL.
package emailchange
