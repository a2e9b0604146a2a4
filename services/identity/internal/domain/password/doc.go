// Package password holds the sign-in password rules and their argon2id hashing. Hashes are PHC
// strings ($argon2id$v=19$m=…,t=…,p=…$salt$hash) that carry their own parameters, so the cost can be
// raised later without invalidating stored hashes.
package password
