// Package convert translates between the billing domain and its proto messages, in one place.
package convert
