package openapi

import _ "embed"

// Document is the generated document, JSON.
//
//go:embed berth.json
var Document []byte
