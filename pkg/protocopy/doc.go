// Package protocopy copies same-named scalar fields from one proto message into another of a
// different type, for read models that re-publish another context's message under their own type
// (analytics renders identity's user and tenant's tenant). Listing those fields by hand is where a
// field gets forgotten; copying by name instead makes a rename silent, so every copy is declared
// once as a Fields value whose Check a test calls: a field the target expects that the source lacks,
// or holds with another kind, fails that test rather than emptying a field in production.
package protocopy
