// Command outbound runs the outbound service as its own process; its settings are those of every
// module (pkg/svcmain) plus the ones its server package documents.
package main
