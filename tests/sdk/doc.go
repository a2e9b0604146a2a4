// Package sdk holds the published-SDK test: it starts the whole stack with the issuer id the
// published browser SDK (@userdocks/web-client-sdk@0.15.0) has built in, signs up through the
// hosted login page over plain HTTP to obtain an authorization code, and then runs sdk.mjs in
// Node, which exchanges the code and refreshes the token through the unmodified SDK. It proves the
// wire facts the published interface's decisions record about the client ("Client
// compatibility") against the real client, not a re-reading of it.
//
// The test needs node and npm; it installs the pinned package (package-lock.json) with npm ci into
// a temporary directory. Without node or npm it skips, or fails under CI=true.
package sdk
