// Package app holds the outbound context's use cases: managing an app's webhook endpoints,
// turning Berth's internal events into public ones and recording a delivery per subscribed
// endpoint, and running those deliveries on their retry schedule. Storage, the HTTP sender and
// the clock are ports.
package app
