// Package webflow is what an app's end user and backend do over HTTP, for the tools that drive a
// running stack from outside as separate processes do (the stack benchmark, the cluster test):
// the hosted login page's sign-up and sign-in with its CSRF cookie, and route 1's token answers.
package webflow
