// Package resetmail renders the password-reset mail in the languages Berth speaks: a text and an
// HTML part carrying the reset link and the code. Nothing a user chose appears in it: the subject
// names the app (chosen by its operator), the link carries only the opaque secret, and the HTML
// part goes through html/template all the same.
package resetmail
