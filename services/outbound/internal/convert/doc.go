// Package convert turns the outbound domain's endpoints and deliveries into the REST routes'
// messages and the routes' bodies into the use cases' inputs.
package convert
