// Package invite renders the referral invite email (route 23) in the languages Berth speaks, every
// sentence a message of pkg/locale, with the app's branding (display name, accent colour, logo).
// The HTML part goes through html/template, so names chosen by users and apps are escaped; the
// text part is plain text, where nothing needs escaping. The inviter's name is user-chosen: it
// stays out of the subject and the link and appears in the body only as quoted data.
package invite
