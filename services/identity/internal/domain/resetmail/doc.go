// Package resetmail renders the password-reset mail: a text and an HTML part carrying the reset
// link and the code, in English or German, every sentence a message of pkg/locale. Nothing a user
// chose appears in it: the subject names the app (its operator chose the name), the link carries
// only the opaque secret, and the HTML part goes through html/template all the same.
package resetmail
