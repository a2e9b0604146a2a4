// Package apidocs renders the REST API reference that people read in a browser at /docs/api.
//
// The page is built from the OpenAPI document the edge serves at /openapi.json (proto/openapi),
// once, when the edge starts: the document is embedded in the binary, so the page cannot disagree
// with it and serving it costs a copy of bytes. It shows an introduction (the two envelope
// families, the credentials and how each is sent), a table of contents grouped by tag, and for
// every operation its method and path, parameters, request body and responses with their fields
// and types ($refs resolved, nested objects expanded as dotted field paths) and the examples the
// document holds. Each operation is anchored at its operationId, so other docs can link to
// /docs/api#TenantService_GetTenant.
//
// Everything is rendered here with html/template, which escapes every text the document holds.
// The page has no script, no external asset and no style attribute: its one stylesheet is inline
// and allowed by its hash, so it works offline and under a Content-Security-Policy that allows
// nothing else.
package apidocs
