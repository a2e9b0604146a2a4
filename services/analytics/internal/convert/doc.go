// Package convert renders the analytics read models as analytics/v1 messages: route 8's list, and
// the user and tenant snapshots its items embed. The gRPC adapter answers with them.
package convert
