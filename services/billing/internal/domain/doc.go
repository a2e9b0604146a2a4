// Package domain holds the billing context's entities and their rules: a tenant's billing
// account (the state billing alone decides, at a revision that only grows), provider
// connections, app settings, the pspy catalog and promotions with their redemption rules.
// It imports nothing of transport or storage.
package domain
