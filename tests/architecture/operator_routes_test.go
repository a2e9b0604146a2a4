package architecture

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/berthhq/berth/pkg/route"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	_ "github.com/berthhq/berth/proto/registry" // links every context's protos
)

// operatorRouteProblem says what is wrong with a method's operator declaration, "" when nothing is.
// The policy (pkg/authn) holds a member's operator token to their project through the one request
// field the route names; a field that is missing, misspelt or not a string would hold it to nothing.
func operatorRouteProblem(md protoreflect.MethodDescriptor, r *edgev1.Route) string {
	app, project := r.GetOperatorAppField(), r.GetOperatorProjectField()
	if !r.GetOperator() {
		if app != "" || project != "" {
			return "names an operator field without operator: true"
		}
		return ""
	}
	switch {
	case r.GetPublic() || r.GetServiceOnly():
		return "admits operators on a public or service-only route"
	case md.IsStreamingClient():
		return "admits operators on a client stream, whose messages could name different apps"
	case (app == "") == (project == ""):
		return "must name exactly one of operator_app_field and operator_project_field"
	}
	name := app + project
	f := md.Input().Fields().ByName(protoreflect.Name(name))
	if f == nil || f.Kind() != protoreflect.StringKind || f.IsList() || f.ContainingOneof() != nil {
		return "names " + name + ", which is no top-level string field of " + string(md.Input().FullName())
	}
	return ""
}

func TestEveryOperatorRouteNamesOneStringFieldOfItsRequest(t *testing.T) {
	operators := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(fd.Package()), "berth.") {
			return true
		}
		for i := range fd.Services().Len() {
			methods := fd.Services().Get(i).Methods()
			for j := range methods.Len() {
				md := methods.Get(j)
				r := route.Of(md)
				if r == nil {
					continue
				}
				if r.GetOperator() {
					operators++
				}
				if problem := operatorRouteProblem(md, r); problem != "" {
					t.Errorf("%s %s", md.FullName(), problem)
				}
			}
		}
		return true
	})
	if operators == 0 {
		t.Fatal("no operator route found: the protos were not linked")
	}
}

// The rule above catches each kind of mistake, checked on declarations made up for the purpose
// against a real request (SetAppEnabledRequest: appId string, enabled bool).
func TestTheOperatorRouteRuleCatchesEachMistake(t *testing.T) {
	md, err := protoregistry.GlobalFiles.FindDescriptorByName("berth.identity.v1.IdentityAdminService.SetAppEnabled")
	if err != nil {
		t.Fatal(err)
	}
	method := md.(protoreflect.MethodDescriptor)
	for _, tc := range []struct {
		name string
		r    *edgev1.Route
		ok   bool
	}{
		{"an app field that exists", &edgev1.Route{Admin: true, Operator: true, OperatorAppField: "appId"}, true},
		{"no operator at all", &edgev1.Route{Admin: true}, true},
		{"neither field", &edgev1.Route{Admin: true, Operator: true}, false},
		{"both fields", &edgev1.Route{Admin: true, Operator: true, OperatorAppField: "appId", OperatorProjectField: "appId"}, false},
		{"a misspelt field", &edgev1.Route{Admin: true, Operator: true, OperatorAppField: "appID"}, false},
		{"a field that is no string", &edgev1.Route{Admin: true, Operator: true, OperatorAppField: "enabled"}, false},
		{"a field without operator: true", &edgev1.Route{Admin: true, OperatorAppField: "appId"}, false},
		{"a public route", &edgev1.Route{Public: true, Operator: true, OperatorAppField: "appId"}, false},
		{"a service-only route", &edgev1.Route{ServiceOnly: true, Operator: true, OperatorAppField: "appId"}, false},
	} {
		if got := operatorRouteProblem(method, tc.r) == ""; got != tc.ok {
			t.Errorf("%s: accepted = %v, want %v", tc.name, got, tc.ok)
		}
	}
}
