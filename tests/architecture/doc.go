// Package architecture holds the tests that keep the service template: the domain and use-case
// layers of every service stay free of transport and storage, and no service reaches into
// another's packages (contexts talk over gRPC and events only); every service has the template's
// folders, a production binary and a doc.go per package, one use-case constructor
// (app.New(app.Config) (*app.Service, error)), storage ports of one aggregate each, and consumers
// that read events through events.Handle (template_test.go). They read the sources, so a new
// service is checked as soon as its folder exists, and the module list must name every folder.
// No module of go.work requires a sibling module for its tests alone (modules_test.go), and the
// repository itself tracks no build outputs. Every route that admits project members' operator
// tokens names the one request field that holds them to their project (operator_routes_test.go).
package architecture
