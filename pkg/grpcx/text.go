package grpcx

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/text"
)

// checkText holds every request message to the text rule (pkg/text) before the policy and the
// handler see it: a string with a control character, or (for messages built in process) invalid
// UTF-8, is answered InvalidArgument naming the field path, the same 400 the REST edge gives.
//
// Invalid UTF-8 sent over the wire never gets here: the protobuf codec refuses to unmarshal it
// before any interceptor runs (gRPC answers Internal). The REST edge checks it before marshalling.
func checkText(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if m, ok := req.(proto.Message); ok {
		if err := text.Message(m); err != nil {
			return nil, err
		}
	}
	return h(ctx, req)
}

// streamCheckText is checkText for every message a client sends on a stream.
func streamCheckText(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	return h(srv, &textStream{ServerStream: ss})
}

type textStream struct{ grpc.ServerStream }

func (s *textStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if pm, ok := m.(proto.Message); ok {
		return text.Message(pm)
	}
	return nil
}
