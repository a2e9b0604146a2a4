// Command genopenapi writes the OpenAPI 3 document of Berth's REST surface (openapi/berth.json)
// from the compiled protos of every context in proto/registry: every HTTP-bound RPC's paths, parameters and body from its
// google.api.http rule; its credentials, success status and envelope family from its
// berth.edge.v1.route option; the field names and JSON types as protojson renders them with the
// edge's options (proto names, every field present); each operation's summary and description
// from its RPC's comment (read from a descriptor set with source info, which gen.sh makes), a
// request's required fields from berth.edge.v1.required, and examples from openapi/examples.json.
// gen.sh runs it, so the document cannot drift
// from the protos, and `make proto-check` fails when the committed one differs.
package main
