// Package outbound consumes the outbound context's events in identity, which owns the project
// members and the mailer: an endpoint outbound disabled is mailed to the app's project members.
package outbound
