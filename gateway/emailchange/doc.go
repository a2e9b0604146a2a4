// Package emailchange serves the hosted page that confirms an email change: the link of the mail
// sent to the new address when a user changed their email with their own token (route 18).
//
// GET /email-change?token=… checks the link with the identity service without using it and shows
// the app, the new address and a "Confirm" button; only POST /email-change (the button) confirms.
// So a mail scanner or link preview that opens the link changes nothing. The form is protected by
// a double-submit CSRF token (webpage.CSRF) like the login page. Everything is rendered here
// (html/template, the shared layout, no scripts), failures show fixed texts chosen by gRPC code,
// and the link's token never reaches a log line.
package emailchange
