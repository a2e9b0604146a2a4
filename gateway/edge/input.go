package edge

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/reqid"
	"github.com/berthhq/berth/pkg/text"
)

// input is what the edge learned about a request's bytes before grpc-gateway forwarded it. The
// runtime builds the proto request in generated code the edge cannot enter; these facts let the
// error handler answer a refusal that happened there in the route's family, naming the field,
// instead of with the runtime's parser text.
type input struct {
	// refused is the first problem found in a part of the request that no proto field holds (an
	// unparsable query, a query parameter the route ignores, a body that does not decode); nil
	// when there is none.
	refused *failure
	// invoked is set once the request reached a backend call: an InvalidArgument the runtime
	// produced before that is the runtime's, and its text must not be shown.
	invoked bool
}

// inputOf is the request's input, or nil for a context that did not pass the middleware.
func inputOf(ctx context.Context) *input {
	if ex, ok := ctx.Value(exchangeKey{}).(*exchange); ok {
		return &ex.input
	}
	return nil
}

func badInput(field, message string) *failure {
	return &failure{status: http.StatusBadRequest, message: message, validation: field}
}

// checkInput records, for every request, whether its query holds bad bytes, and hands the body to
// the decoder with the request's input attached. It refuses nothing itself: which family answers
// is only known once the runtime has resolved the route, so the refusal is delivered by the
// backend connection (checkedConn) or the error handler. An unmatched path answers 404 as before.
func checkInput(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in := &exchangeOf(r.Context()).input
		in.refused = headerProblem(r.Header)
		if in.refused == nil {
			in.refused = queryProblem(r.URL.RawQuery)
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &trackedBody{ReadCloser: r.Body, in: in}
		}
		next.ServeHTTP(w, r)
	})
}

// trackedBody is the request body with its request's input, so the decoder can record why a body
// was refused (the runtime passes the decoder nothing but the body).
type trackedBody struct {
	io.ReadCloser
	in *input
}

// headerProblem checks the client headers that cross the edge. gRPC metadata holds printable ASCII
// only, and grpc-gateway silently drops a header that is not: a key with a stray byte would then
// arrive as no key at all (401) instead of as the bad input it is.
func headerProblem(h http.Header) *failure {
	for _, name := range []string{"X-Api-Key", "X-Api-Key-Type", "X-Client-Id", "Authorization"} {
		for _, v := range h.Values(name) {
			if !printableASCII(v) {
				field := name
				if md, ok := forwardedHeaders[name]; ok {
					field = headerName(md)
				}
				return badInput(field, field+" must be printable ASCII")
			}
		}
	}
	return nil
}

// queryProblem checks the whole query string, parameters the route ignores (clients send
// ?test=true) included: every text input is held to the text rule.
func queryProblem(raw string) *failure {
	if raw == "" {
		return nil
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		// A malformed escape or a semicolon separator; the runtime would answer with its parser text.
		return badInput("query", "query: not a valid query string (malformed escape or separator)")
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if p := text.SingleLine.Problem(k); p != "" {
			return badInput("query", "query: parameter names "+p)
		}
		for _, v := range q[k] {
			if err := text.Check(k, v); err != nil {
				f, _ := fault.As(err)
				return badInput(k, f.Message())
			}
		}
	}
	return nil
}

// checkedConn is a backend connection that refuses, before anything is marshalled, a request the
// services would refuse anyway or that gRPC could not even send: bad bytes in any string of the
// request message (path ids, query and body fields, under the same rule and multi-line option the
// services apply), in the query, or in a forwarded header. The refusal is InvalidArgument naming
// the field as the caller sent it, so the error handler renders a 400 in the route's family.
type checkedConn struct {
	grpc.ClientConnInterface
}

func (c checkedConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if err := admitCall(ctx); err != nil {
		return err
	}
	if err := admitMessage(method, args); err != nil {
		return err
	}
	return c.ClientConnInterface.Invoke(withCallMetadata(ctx), method, args, reply, opts...)
}

// withCallMetadata forwards the request id the middleware accepted or minted — not the raw client
// header, which may have been replaced for being unsafe to log — and the caller's address, which
// the services stamp on the events the call causes (authn.MDClientAddress).
func withCallMetadata(ctx context.Context) context.Context {
	var kv []string
	if id := reqid.From(ctx); id != "" {
		kv = append(kv, reqid.MetadataKey, id)
	}
	if addr := exchangeOf(ctx).client; addr != "" {
		kv = append(kv, authn.MDClientAddress, addr)
	}
	if len(kv) == 0 {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

// NewStream opens a streaming call (the long lists) under the same rules: the call is checked
// before it is opened, its request message before it is sent.
func (c checkedConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if err := admitCall(ctx); err != nil {
		return nil, err
	}
	cs, err := c.ClientConnInterface.NewStream(withCallMetadata(ctx), desc, method, opts...)
	if err != nil {
		return nil, err
	}
	return checkedStream{ClientStream: cs, method: method}, nil
}

// checkedStream checks each request message before it is sent.
type checkedStream struct {
	grpc.ClientStream
	method string
}

func (s checkedStream) SendMsg(m any) error {
	if err := admitMessage(s.method, m); err != nil {
		return err
	}
	return s.ClientStream.SendMsg(m)
}

// admitCall records the resolved RPC, marks the request's call as made (errors from here on are
// the call's, not the runtime's) and refuses it for what the edge already found wrong in the
// request.
//
// The forwarded metadata needs no check of its own: grpc-gateway forwards only header values gRPC can carry
// (printable ASCII) and drops the rest, which is why headerProblem refuses a credential header
// with another byte before it could silently disappear.
func admitCall(ctx context.Context) error {
	resolved(ctx)
	if in := inputOf(ctx); in != nil {
		in.invoked = true
		if in.refused != nil {
			return refusal(in.refused.validation, in.refused.message)
		}
	}
	return nil
}

// admitMessage refuses a request message holding a string the text rule refuses.
func admitMessage(method string, args any) error {
	if m, ok := args.(proto.Message); ok {
		if err := text.Message(m); err != nil {
			f, _ := fault.As(err)
			field := strings.TrimPrefix(f.Field(), bodyPrefix(method))
			return refusal(field, field+strings.TrimPrefix(f.Message(), f.Field()))
		}
	}
	return nil
}

// refusal is the status a service would have answered for fault.Invalid(field, message).
func refusal(field, message string) error {
	return grpcx.StatusOf(fault.Invalid(field, "%s", message)).Err()
}

// printableASCII is what gRPC accepts in a text metadata value (and all an API key, client id,
// key type or bearer token ever is).
func printableASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// headerName is the HTTP header a metadata key came from, as the contract spells it
// ("X-API-KEY"; Authorization, which is not in forwardedHeaders, stays "Authorization").
func headerName(key string) string {
	for h, md := range forwardedHeaders {
		if md == key {
			return strings.ToUpper(h)
		}
	}
	return textproto.CanonicalMIMEHeaderKey(key)
}

// bodyPrefix is the proto path of the field an RPC's HTTP body fills ("patch." for route 17), so a
// body field is named as the caller sent it; "" when the body is the whole request or there is none.
func bodyPrefix(fullMethod string) string {
	name := strings.TrimPrefix(fullMethod, "/")
	i := strings.LastIndex(name, "/")
	if i < 0 {
		return ""
	}
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name[:i] + "." + name[i+1:]))
	if err != nil {
		return ""
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok || md.Options() == nil {
		return ""
	}
	rule, _ := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule)
	if body := rule.GetBody(); body != "" && body != "*" {
		return body + "."
	}
	return ""
}

// runtimeParameter finds the parameter named in the errors grpc-gateway's generated code and
// runtime produce while building a request ("type mismatch, parameter: x, ...", "missing parameter
// x", `too many values for field "x"`, `parsing field "x"`).
var runtimeParameter = regexp.MustCompile(`parameter:? "?([A-Za-z0-9_.]+)|field "([A-Za-z0-9_.]+)"`)

// runtimeFailure is the answer to an InvalidArgument the runtime produced before any backend was
// called: its text is parser text, so only the parameter it names (if any) is kept.
func runtimeFailure(err error) failure {
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		return failureOf(err)
	}
	if m := runtimeParameter.FindStringSubmatch(st.Message()); m != nil {
		field := m[1] + m[2]
		return *badInput(field, field+": not a valid value")
	}
	return *badInput("request", "request: not valid")
}
