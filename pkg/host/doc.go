// Package host runs Berth's processes. Every process kind — a context's production binary, the
// gateway, the all-in-one — is a host with different options: Main parses the process's declared
// settings before anything starts, builds the logger and tracing and stops on SIGINT or SIGTERM;
// ConnectBus reaches NATS JetStream (or embeds it); Start listens for any set of modules, builds
// and serves each, runs their background work (relays, watches, consumers), serves the HTTP edge
// and the ops endpoints, and Close stops it all in order. So the three processes start, serve and
// stop the same way, and a fix to one is a fix to all.
package host
