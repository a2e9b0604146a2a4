// Package accountmail composes the mails of the account flows the hosted pages start: the
// verification mail of a new address and the notice to a registered address that someone tried to
// sign up with it. Each mail has a text and an HTML part. Subjects carry only the app's name (an
// operator's text); links are built by the caller from the deployment's public URL and secrets, so
// no text a visitor typed reaches a subject or a link. Their sentences are messages of pkg/locale
// (English and German).
package accountmail
