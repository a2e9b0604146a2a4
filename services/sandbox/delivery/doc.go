// Package delivery sends the providers' webhooks: the pspx sandbox's signed events and the pspy
// sandbox's payment notifications. Both providers deliver the same way, so they share this queue:
// a job is posted by a pool of workers; any 2xx answer delivers it; anything else (another
// status, a connection error, a timeout) schedules the next attempt on the provider's retry
// schedule until the schedule runs out and the delivery fails for good.
//
// Schedules are written in provider time (minutes, hours, days). The sandboxes cannot make tests
// wait that long, so every wait is multiplied by a time scale: 1 keeps the provider's pace, 0.0001
// turns the first pspx retry after a minute into one after 6 ms. Retries run on real time, never
// on the sandbox clock: an advance of the clock by days does not replay three days of retries.
//
// Fault knobs (duplicates, shuffled order, delays, lost attempts, failures forced on the first
// attempts, short timeouts) let tests see how a receiver copes with what real providers do now and
// then. Every attempt is kept in a log that /_sandbox/deliveries serves, so a person can see what
// was sent where and what the receiver answered.
package delivery
