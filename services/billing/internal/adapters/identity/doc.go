// Package identity is billing's adapter to the identity context: it names the tenant of the user
// a route acts for.
package identity
