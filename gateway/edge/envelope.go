package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/gateway/pbjson"
	"github.com/berthhq/berth/pkg/route"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
)

// protoJSON renders response messages. Proto field names are the contract's JSON names, and every
// documented field must be present even when unset (zero values, null for messages).
var protoJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// marshaler is the only marshaler of the mux (registered for every media type). Unknown request
// fields are dropped rather than rejected: clients send extra fields and must not fail for it, and
// a dropped field can never be applied.
//
// Its decoder (decode.go) answers a body it cannot decode with the field or rule that failed.
var marshaler = jsonMarshaler{&runtime.JSONPb{
	MarshalOptions:   protoJSON,
	UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
}}

// encodedJSON is a response body the edge has already encoded; the marshaler writes it as it is.
// The /v1 envelope is built this way because going through encoding/json would re-parse and
// re-compact the protojson-encoded data on every response.
type encodedJSON []byte

// v1Head is the start of a /v1 success envelope, in the documented key order, up to the value of
// data: {"success":true,"message":<route message>,"error":null,"data":
func v1Head(message string) []byte {
	msg, _ := json.Marshal(message) // a Go string always encodes
	head := append([]byte(`{"success":true,"message":`), msg...)
	return append(head, `,"error":null,"data":`...)
}

var v1Heads sync.Map // route message -> its envelope head ([]byte), built once per route

// v1HeadOf returns a new buffer holding the envelope head of message, with room for a small data.
func v1HeadOf(message string) []byte {
	head, ok := v1Heads.Load(message)
	if !ok {
		head, _ = v1Heads.LoadOrStore(message, v1Head(message))
	}
	h := head.([]byte)
	return append(make([]byte, 0, len(h)+1024), h...)
}

func v1Envelope(message string, data []byte) encodedJSON {
	return append(append(v1HeadOf(message), data...), '}')
}

// routeOf returns the route option of the RPC grpc-gateway resolved for this request.
func routeOf(ctx context.Context) (method string, r *edgev1.Route, ok bool) {
	method, ok = runtime.RPCMethod(ctx)
	if !ok {
		return "", nil, false
	}
	r, ok = route.ForMethod(method)
	return method, r, ok
}

// rewriteSuccess is the mux's forward-response rewriter: it wraps a successful response in the
// envelope of the resolved RPC's family.
func rewriteSuccess(ctx context.Context, resp proto.Message) (any, error) {
	method, r, ok := routeOf(ctx)
	if !ok {
		return nil, fmt.Errorf("edge: no route option for %q", method)
	}
	return envelope(ctx, method, r, resp)
}

// envelope renders resp for route r of method. /api/v1 responses are already the collection
// envelope and pass as they are; a chunk of a streamed list is rendered as its part of the /v1
// envelope (streams.go). A method without a declared family is a programming error (the
// route table test guards it); it fails closed as a 500 rather than answering in a guessed shape.
func envelope(ctx context.Context, method string, r *edgev1.Route, resp proto.Message) (any, error) {
	switch r.GetFamily() {
	case edgev1.Family_FAMILY_API:
		return resp, nil
	case edgev1.Family_FAMILY_V1:
		if c, ok := chunkOf(resp.ProtoReflect()); ok {
			return renderChunk(ctx, r, resp.ProtoReflect(), c)
		}
		if r.GetDataNull() {
			return v1Envelope(r.GetMessage(), []byte("null")), nil
		}
		body, err := pbjson.Append(v1HeadOf(r.GetMessage()), resp)
		if err != nil {
			return nil, fmt.Errorf("edge: render %s response: %w", method, err)
		}
		return encodedJSON(append(body, '}')), nil
	default:
		return nil, fmt.Errorf("edge: %s declares no envelope family", method)
	}
}

// successStatus is the mux's forward-response option applying the route's cache rule and success
// status and, when the service allowed the request's origin, the CORS headers.
func successStatus(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
	corsHeaders(ctx, w) // headers first: writeSuccessStatus may send them
	if _, r, ok := routeOf(ctx); ok {
		setNoStore(w.Header(), r)
		writeSuccessStatus(w, r)
	}
	return nil // without a route, rewriteSuccess answers 500
}

// setNoStore sets Cache-Control: no-store for a route that declares no_store (token responses).
// It is read from the route option, so the rule is declared once, beside the RPC.
func setNoStore(h http.Header, r *edgev1.Route) {
	if r.GetNoStore() {
		h.Set("Cache-Control", "no-store")
	}
}

// writeSuccessStatus writes a declared non-200 status. grpc-gateway's ForwardResponseMessage never
// calls WriteHeader itself (its first Write implies 200); it runs the forward-response options after
// setting Content-Type and before writing the body, so writing the status here is what makes a 201
// reach the client.
func writeSuccessStatus(w http.ResponseWriter, r *edgev1.Route) {
	if code := route.Status(r); code != http.StatusOK {
		w.WriteHeader(code)
	}
}

// writeJSON writes a body the edge renders itself (errors, health): always a JSON object with
// Content-Type application/json.
func writeJSON(w http.ResponseWriter, status int, body any) {
	buf, err := json.Marshal(body)
	if err != nil {
		// Only the edge's own fixed structs come here, and they always marshal.
		panic(fmt.Sprintf("edge: marshal %T: %v", body, err))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf)
}
