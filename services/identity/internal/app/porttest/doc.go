// Package porttest is the conformance suite of the identity store ports. Every adapter (memory,
// PostgreSQL) runs Run, so the use cases can rely on one behaviour whichever store is configured.
//
// A case an adapter cannot honour is declared by that adapter's test as an Exempt with its reason.
package porttest
