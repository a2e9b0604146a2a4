// Package convert builds the identity proto messages from domain values. The gRPC adapter answers with
// them and the use cases publish them as event payloads, so a user looks the same on both paths.
package convert
