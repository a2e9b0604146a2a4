// Package mail holds Berth's email port (Message, Sender) and its two adapters: SMTP, which
// delivers through a mail server, and Mailbox, the in-memory development mailbox of the all-in-one
// run that keeps what would have been sent and shows it in a browser.
//
// Both adapters check a message the same way before taking it (see Message), so a bad recipient
// fails in development exactly as it would in production.
package mail
