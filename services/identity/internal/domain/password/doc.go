// Package password holds the password rules and their argon2id hashing.
//
// The rules (Check) follow NIST SP 800-63B and are the same for every flow that sets a password:
// 8 to 128 characters, not only whitespace, not on a list of common and breached passwords (the
// list shipped with the zxcvbn Go port, compared case-insensitively), and not containing the local
// part of the account's email address (compared case-insensitively; local parts shorter than three
// characters are exempt). There are no composition rules and no expiry.
//
// Hashes are PHC strings ($argon2id$v=19$m=…,t=…,p=…$salt$hash) that carry their own parameters,
// so the cost can be raised later without invalidating stored hashes.
package password
