// Package grpctest serves a gRPC server in process for one test and hands back a client connection
// to it, so tests exercise the real server (interceptors, codecs, status mapping) without a port.
package grpctest
