// Package webhookrx is an app's webhook receiver for tests: an HTTP server on loopback that checks
// every delivery's Standard Webhooks signature with the endpoint's secret, answers 2xx, and
// records what arrived, so a test can ask which events reached the app and how often.
//
// The signature check is written from the Standard Webhooks specification, not with Berth's
// signer, so a test that uses it proves what a receiver built on the specification would accept.
package webhookrx
