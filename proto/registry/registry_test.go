package registry_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	"github.com/berthhq/berth/proto/registry"
)

// TestEveryContextPackageIsRegistered reads the .proto sources, not the registry: a context whose
// package is missing from Contexts has files this test binary does not link, or files that
// CheckFile refuses.
func TestEveryContextPackageIsRegistered(t *testing.T) {
	sources, err := filepath.Glob("../*/v*/*.proto")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no .proto sources under proto/ (%v)", err)
	}
	for _, src := range sources {
		rel, _ := filepath.Rel("..", src)
		fd, err := protoregistry.GlobalFiles.FindFileByPath(filepath.ToSlash(rel))
		if err != nil {
			t.Errorf("%s is not linked: add its Go package to proto/registry's Contexts", rel)
			continue
		}
		if err := registry.CheckFile(fd); err != nil {
			t.Error(err)
		}
	}
}

func TestEachContextIsItsOwnPackage(t *testing.T) {
	var names []string
	for _, c := range registry.Contexts {
		if want := protoreflect.FullName("berth." + c.Name + ".v1"); c.Package() != want {
			t.Errorf("context %s: File is in package %s, want %s", c.Name, c.Package(), want)
		}
		if slices.Contains(names, c.Name) {
			t.Errorf("context %s is listed twice", c.Name)
		}
		names = append(names, c.Name)
		if len(c.Files()) == 0 {
			t.Errorf("context %s has no files", c.Name)
		}
	}
	if got := registry.Names(); !slices.Equal(got, names) {
		t.Errorf("Names() = %v, want %v", got, names)
	}
}

// TestHTTPListsEveryHTTPBoundService holds each context's HTTP list to its files: a service with a
// google.api.http binding that is not listed would have routes nobody serves, and a listed service
// without one would serve nothing.
func TestHTTPListsEveryHTTPBoundService(t *testing.T) {
	for _, c := range registry.Contexts {
		var bound, listed []string
		for _, fd := range c.Files() {
			for i := range fd.Services().Len() {
				if sd := fd.Services().Get(i); httpBound(sd) {
					bound = append(bound, string(sd.FullName()))
				}
			}
		}
		for _, s := range c.HTTP {
			listed = append(listed, s.Name)
		}
		slices.Sort(bound)
		slices.Sort(listed)
		if !slices.Equal(bound, listed) {
			t.Errorf("context %s: HTTP lists %v, its files bind %v", c.Name, listed, bound)
		}
	}
}

func httpBound(sd protoreflect.ServiceDescriptor) bool {
	for i := range sd.Methods().Len() {
		if len(edgev1.HTTPBindings(sd.Methods().Get(i))) > 0 {
			return true
		}
	}
	return false
}

// TestEveryServiceRegistersItsRoutes registers every listed service on a mux of its own: a
// registration that is not the service's own fails on the routes another already holds, or on
// none at all.
func TestEveryServiceRegistersItsRoutes(t *testing.T) {
	for _, c := range registry.Contexts {
		for _, s := range c.HTTP {
			mux := runtime.NewServeMux()
			if err := s.Register(context.Background(), mux, noConn{}); err != nil {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
	}
}

// noConn is a connection that is never used: registering routes makes no call.
type noConn struct{ grpc.ClientConnInterface }

func TestFilesHoldsEveryContextsFilesAndNothingElse(t *testing.T) {
	files := registry.Files()
	want := 0
	for _, c := range registry.Contexts {
		for _, fd := range c.Files() {
			want++
			if _, err := files.FindFileByPath(fd.Path()); err != nil {
				t.Errorf("Files() lacks %s", fd.Path())
			}
		}
	}
	if files.NumFiles() != want {
		t.Errorf("Files() holds %d files, the contexts %d", files.NumFiles(), want)
	}
	if _, err := files.FindFileByPath(edgev1.File_edge_v1_route_proto.Path()); err == nil {
		t.Error("Files() holds edge/v1/route.proto, which is no context's")
	}
}

func TestCheckFileRefusesServicesAndEventsOutsideEveryContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		fd   protoreflect.FileDescriptor
		ok   bool
	}{
		{"a context's file", registry.Contexts[0].File, true},
		{"an options file", edgev1.File_edge_v1_route_proto, true},
		{"the events option's file", eventsv1.File_events_v1_event_proto, true},
		{"an unlisted package's service", syntheticFile(t, true, false), false},
		{"an unlisted package's event", syntheticFile(t, false, true), false},
		{"an unlisted package's plain message", syntheticFile(t, false, false), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := registry.CheckFile(tc.fd); (err == nil) != tc.ok {
				t.Errorf("CheckFile = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// syntheticFile is a file of package berth.unlisted.v1, which no context declares, with a plain
// message and, as asked, a service or an event payload.
func syntheticFile(t *testing.T, service, event bool) protoreflect.FileDescriptor {
	t.Helper()
	msgOpts := &descriptorpb.MessageOptions{}
	if event {
		proto.SetExtension(msgOpts, eventsv1.E_Event, &eventsv1.Event{Types: []string{"unlisted.thing.changed"}})
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("unlisted/v1/unlisted.proto"),
		Package:    proto.String("berth.unlisted.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{eventsv1.File_events_v1_event_proto.Path()},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Thing"), Options: msgOpts},
		},
	}
	if service {
		fdp.Service = []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("ThingService"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: proto.String("Get"), InputType: proto.String(".berth.unlisted.v1.Thing"), OutputType: proto.String(".berth.unlisted.v1.Thing")},
		}}}
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}
