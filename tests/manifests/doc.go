// Package manifests holds the tests that keep the deployment descriptions true to the code: the
// Kubernetes manifests decode strictly into the API's own types and deploy every module, the
// compose file gives every module its own database, every module has a production binary, and the
// edge forwards only to modules of the list.
package manifests
