// Package mount serves every provider sandbox under one address: pspx at /_sandbox/pspx/, pspy at
// /_sandbox/pspy/, the OpenID Connect providers at /_sandbox/idp/<name>/, the shared clock's
// control at /_sandbox/clock/advance, and the webhook deliveries' controls at /_sandbox/faults and
// /_sandbox/deliveries. The all-in-one mounts it on the edge's address and cmd/sandbox serves it
// alone.
package mount
