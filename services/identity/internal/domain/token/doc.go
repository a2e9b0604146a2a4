// Package token builds, signs and verifies the RS256 JWTs issued to an app's users, and describes
// the signing keys as JWKs.
//
// Encoding is done here rather than by golang-jwt because the published browser SDK decodes the
// header and payload segments with the browser's atob, which rejects the base64url characters '-'
// and '_'. Those appear only where a byte at a position ≡ 2 (mod 3) is '>', '?', '~' or DEL, or where
// any byte is ≥ 0x80. The claim JSON is therefore written as pure ASCII with those four characters
// and every non-ASCII rune escaped as \uXXXX — still the same JSON to every parser — and the
// base64url of header and payload never contains '-' or '_'. golang-jwt's RS256 method signs the
// resulting input and parses tokens on the way back in.
package token
