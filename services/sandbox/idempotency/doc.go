// Package idempotency is the sandboxes' replay of idempotent POSTs, as both real providers do it:
// the first request with a key runs and its answer is stored; a later request with the same key
// and the same parameters gets the stored answer again without running; the same key with other
// parameters is refused. Keys are scoped by account (the secret key), so two accounts never see
// each other's answers.
package idempotency
