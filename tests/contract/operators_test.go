package contract

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/route"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// operatorMethod is one RPC that admits project members' operator tokens, with the module that
// serves it and the request field that names the app or project.
type operatorMethod struct {
	module string
	md     protoreflect.MethodDescriptor
	field  string
	app    bool // field names an app (else a project)
}

// operatorMethods finds every operator route among the linked protos. A context's package is
// berth.<module>.v1, the module that serves it.
func operatorMethods(t *testing.T) []operatorMethod {
	t.Helper()
	var out []operatorMethod
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		parts := strings.Split(string(fd.Package()), ".")
		if len(parts) != 3 || parts[0] != "berth" {
			return true
		}
		for i := range fd.Services().Len() {
			methods := fd.Services().Get(i).Methods()
			for j := range methods.Len() {
				md := methods.Get(j)
				r := route.Of(md)
				if !r.GetOperator() {
					continue
				}
				field, app := r.GetOperatorProjectField(), false
				if r.GetOperatorAppField() != "" {
					field, app = r.GetOperatorAppField(), true
				}
				out = append(out, operatorMethod{module: parts[1], md: md, field: field, app: app})
			}
		}
		return true
	})
	if len(out) == 0 {
		t.Fatal("no operator routes found")
	}
	return out
}

// operatorToken makes someone a member of project and issues them an operator token.
func (e *env) operatorToken(t *testing.T, project, email string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := e.admin.Identity.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: project, Email: email, Name: "Member"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.admin.Identity.IssueOperatorToken(ctx, &identityv1.IssueOperatorTokenRequest{MemberId: m.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	return tok.GetToken()
}

// callAs calls m on its module with the operator token and a request naming target in m's field,
// and answers the call's status. A request that could switch the app off switches it on instead
// (enabled: true), so the calls after it meet an enabled app.
func callAs(t *testing.T, conn grpc.ClientConnInterface, m operatorMethod, token, target string) *status.Status {
	t.Helper()
	req := dynamicpb.NewMessage(m.md.Input())
	req.Set(m.md.Input().Fields().ByName(protoreflect.Name(m.field)), protoreflect.ValueOfString(target))
	if f := m.md.Input().Fields().ByName("enabled"); f != nil && f.Kind() == protoreflect.BoolKind {
		req.Set(f, protoreflect.ValueOfBool(true))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, authn.MDAuthorization, "Bearer "+token)
	full := "/" + string(m.md.Parent().FullName()) + "/" + string(m.md.Name())
	res := dynamicpb.NewMessage(m.md.Output())
	if !m.md.IsStreamingServer() && !m.md.IsStreamingClient() {
		return status.Convert(conn.Invoke(ctx, full, req, res))
	}
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: m.md.IsStreamingServer(), ClientStreams: m.md.IsStreamingClient()}, full)
	if err != nil {
		return status.Convert(err)
	}
	if err := stream.SendMsg(req); err != nil {
		return status.Convert(err)
	}
	if err := stream.CloseSend(); err != nil {
		return status.Convert(err)
	}
	return status.Convert(stream.RecvMsg(res))
}

// Every RPC that admits operator tokens, in every service, holds a member to their own project:
// a member of another project naming this project's app or project is refused with
// PermissionDenied, and this project's member passes the policy (the handler may still find the
// rest of the made-up request invalid, but never answers Unauthenticated or PermissionDenied).
func TestEveryOperatorRouteHoldsAMemberToTheirProject(t *testing.T) {
	e := start(t, "memory")
	member := e.operatorToken(t, e.demo.ProjectID, "owner@example.test")
	outsider := e.operatorToken(t, e.other.ProjectID, "outsider@example.test")
	conns := map[string]*grpc.ClientConn{}
	conn := func(module string) *grpc.ClientConn {
		if c, ok := conns[module]; ok {
			return c
		}
		addr := e.stack.Addr(module)
		if addr == "" {
			t.Fatalf("no module %q serves berth.%s.v1", module, module)
		}
		c, err := grpc.NewClient(addr, grpcx.ClientOptions("", e.stack.TLS)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		conns[module] = c
		return c
	}

	served := 0
	for _, m := range operatorMethods(t) {
		t.Run(string(m.md.FullName()), func(t *testing.T) {
			target := e.demo.ProjectID
			if m.app {
				target = e.demo.AppID
			}
			got := callAs(t, conn(m.module), m, outsider, target)
			if got.Code() == codes.Unimplemented && strings.HasPrefix(got.Message(), "unknown service") {
				t.Skipf("%s is not served yet: %s", m.md.Parent().FullName(), got.Message())
			}
			served++
			if got.Code() != codes.PermissionDenied {
				t.Errorf("another project's member: %v %q, want PermissionDenied", got.Code(), got.Message())
			}
			got = callAs(t, conn(m.module), m, member, target)
			if c := got.Code(); c == codes.Unauthenticated || c == codes.PermissionDenied || c == codes.Unimplemented && strings.HasPrefix(got.Message(), "unknown service") {
				t.Errorf("this project's member: %v %q, want the policy to admit them", c, got.Message())
			}
		})
	}
	if served == 0 {
		t.Fatal("no operator route is served")
	}
}

// Through the REST edge an operator token reads a user of its project's app, in the route's
// envelope, and another project's app is 403 there; no browser origin is ever allowed with it.
func TestAnOperatorTokenWorksThroughTheRESTEdgeWithoutCORS(t *testing.T) {
	e := start(t, "memory")
	member := map[string]string{"Authorization": "Bearer " + e.operatorToken(t, e.demo.ProjectID, "owner@example.test"),
		"Origin": "http://localhost:3000"}
	user := e.demo.UserIDs[0]

	r := e.do(http.MethodGet, "/v1/users/"+user+"?appId="+e.demo.AppID, member, "")
	r.ok(t, http.StatusOK)
	if got := r.header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("an operator's answer allows origin %q", got)
	}
	e.do(http.MethodGet, "/v1/users/"+user+"?appId="+e.other.AppID, member, "").fails(t, http.StatusForbidden)
	// Naming no app names nothing of the member's project.
	e.do(http.MethodGet, "/v1/users/"+user, member, "").fails(t, http.StatusForbidden)
}
