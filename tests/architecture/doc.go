// Package architecture holds the test that keeps the service template's boundaries: the domain and
// use-case layers of every service stay free of transport and storage, and no service reaches into
// another's packages (contexts talk over gRPC and events only). It reads the sources, so a new
// service is checked as soon as its folder exists.
package architecture
