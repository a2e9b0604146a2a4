// Package clock is the sandboxes' shared time: real time plus an offset that only moves forward,
// so a test can make a subscription period end without waiting for it. Both providers read the
// same clock, and an advance runs their due work (renewals, settlements) before it returns, so
// the caller of POST /_sandbox/clock/advance sees the effects in its next request.
package clock
