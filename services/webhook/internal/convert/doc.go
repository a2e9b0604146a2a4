// Package convert maps between the webhook/v1 messages and the ingest's domain and use-case
// types: the provider call the edge hands over, the receipt it answers, the operators' filters,
// the stored calls they list and the outcome of a replay. The gRPC adapter only calls the use
// cases between these mappings, as in every other service.
package convert
