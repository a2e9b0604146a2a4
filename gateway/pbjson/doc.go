// Package pbjson renders proto messages as the REST contract's JSON, the output of protojson with
// UseProtoNames and EmitUnpopulated, several times faster. A streamed analytics list renders one
// message per item, up to hundreds of thousands per answer; protojson's reflection per field and
// value made that rendering most of the edge's time.
//
// A message type is planned once (its fields, their encoders and pre-encoded keys) and every
// message of that type is then written straight into the caller's buffer. Types whose JSON form
// protojson special-cases or that need presence rules (well-known types, maps, oneofs, optional
// scalars, groups) are not planned: Append renders those with protojson itself, so the output
// never differs from it.
package pbjson
