// Package passkeytest is a software WebAuthn authenticator for Go tests that run passkey
// ceremonies without a browser: it answers the options a relying party sends to
// navigator.credentials.create and .get with the JSON the pages post back (a "none" attestation,
// an ES256 key), and lets a test set its signature counter to act out a cloned authenticator or a
// replay. The browser tests use Chromium's virtual authenticator instead.
package passkeytest
