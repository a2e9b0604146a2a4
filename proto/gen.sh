#!/usr/bin/env bash
# Regenerates the Go code for every .proto under proto/ (except third_party) with the plugin
# versions pinned as tool directives in proto/go.mod, then the event-type constants (events.berth.go,
# see internal/cmd/genevents) and the OpenAPI document (openapi/berth.json, internal/cmd/genopenapi)
# from the compiled descriptors and the protos' comments. Output lands beside the sources.
set -euo pipefail
cd "$(dirname "$0")"
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
for t in google.golang.org/protobuf/cmd/protoc-gen-go \
         google.golang.org/grpc/cmd/protoc-gen-go-grpc \
         github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway; do
  GOWORK=off go build -o "$bin/" "$t"
done
find . -path ./third_party -prune -o -name '*.pb.go' -print -o -name '*.pb.gw.go' -print -o -name '*.berth.go' -print | xargs -r rm -f
files=$(find . -path ./third_party -prune -o -name '*.proto' -print | sort)
PATH="$bin:$PATH" protoc -I . -I third_party \
  --go_out=. --go_opt=paths=source_relative \
  --go-grpc_out=. --go-grpc_opt=paths=source_relative \
  --grpc-gateway_out=. --grpc-gateway_opt=paths=source_relative \
  $files
GOWORK=off go run ./internal/cmd/genevents $files
# The OpenAPI document takes the RPCs' comments from a descriptor set with source info (the compiled
# Go descriptors carry none) and its examples from openapi/examples.json.
protoc -I . -I third_party --include_imports --include_source_info --descriptor_set_out="$bin/descriptors.pb" $files
GOWORK=off go run ./internal/cmd/genopenapi "$bin/descriptors.pb" openapi/examples.json > openapi/berth.json
