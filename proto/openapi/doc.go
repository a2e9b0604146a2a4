// Package openapi holds the OpenAPI 3 document of Berth's REST surface, generated from the protos
// by internal/cmd/genopenapi (make proto) and served by the edge at /openapi.json.
package openapi
