// Package weborigin parses and compares web origins (scheme://host[:port], RFC 6454) for CORS.
//
// Browsers send the Origin header already serialized: lower-case scheme and host, no default port,
// no path. Operators type origins by hand and redirect URIs carry paths, so every stored origin
// and every request origin goes through Parse or Of, and the allow decision compares the
// normalised strings exactly. Nothing looser (wildcards, suffix matches, "null") is ever allowed:
// one origin that is wrongly allowed lets any page on it read a user's answers.
package weborigin
