package edge

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	"github.com/berthhq/berth/proto/registry"
)

// dispatcher serves every route of the edge, and hands each request to a grpc-gateway mux that
// holds only the routes of the one service its path can reach, when there is one.
//
// Why: a grpc-gateway mux tries its patterns of the request's method one after another, and each
// pattern that does not match costs two allocations and an errors.As; with every module's routes
// in one mux, a read of /v1/users/:id tried about fifteen before its own, which a profile of the
// read path showed as a tenth of the edge's own work. Which mux answers changes nothing else:
// a service's mux is built with the same options and registrations as the mux of all routes, and
// a request goes to it only when no pattern of any other service, nor a page, could match its
// path; everything else, unknown paths included, goes to the mux of all routes.
type dispatcher struct {
	newMux func() *runtime.ServeMux
	all    *runtime.ServeMux
	shards []*runtime.ServeMux // one per registered service
	// owners maps what a pattern fixes of the paths it matches to the index in shards of the
	// service that registered it, or to shared when several services or a page have patterns there.
	owners   map[routeKey]int
	maxDepth int // the most literal segments any routeKey has
}

// shared marks a routeKey of patterns of more than one service, or of a page.
const shared = -1

// pathHandler is where routes the edge serves by hand are mounted (runtime.ServeMux.HandlePath).
type pathHandler interface {
	HandlePath(method, pathPattern string, h runtime.HandlerFunc) error
}

func newDispatcher(newMux func() *runtime.ServeMux) *dispatcher {
	return &dispatcher{newMux: newMux, all: newMux(), owners: map[routeKey]int{}}
}

// register adds a service's routes to the mux of all routes and to a mux of its own, whose
// patterns it reads from the service's google.api.http bindings.
func (d *dispatcher) register(ctx context.Context, svc registry.Service, cc grpc.ClientConnInterface) error {
	desc, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc.Name))
	if err != nil {
		return fmt.Errorf("service %s: %w", svc.Name, err)
	}
	sd, ok := desc.(protoreflect.ServiceDescriptor)
	if !ok {
		return fmt.Errorf("%s is not a service", svc.Name)
	}
	shard := d.newMux()
	if err := svc.Register(ctx, d.all, cc); err != nil {
		return err
	}
	if err := svc.Register(ctx, shard, cc); err != nil {
		return err
	}
	d.shards = append(d.shards, shard)
	methods := sd.Methods()
	for i := range methods.Len() {
		for _, b := range edgev1.HTTPBindings(methods.Get(i)) {
			if err := d.claim(b.Path, len(d.shards)-1); err != nil {
				return err
			}
		}
	}
	return nil
}

// HandlePath mounts a page or a raw route on the mux of all routes only; paths it could match are
// then never dispatched to a service's mux.
func (d *dispatcher) HandlePath(method, pathPattern string, h runtime.HandlerFunc) error {
	if err := d.all.HandlePath(method, pathPattern, h); err != nil {
		return err
	}
	return d.claim(pathPattern, shared)
}

func (d *dispatcher) claim(template string, owner int) error {
	k, err := keyOf(template)
	if err != nil {
		return err
	}
	if prev, ok := d.owners[k]; ok && prev != owner {
		owner = shared
	}
	d.owners[k] = owner
	if depth := strings.Count(k.prefix, "/") + 1; k.prefix != "" && depth > d.maxDepth {
		d.maxDepth = depth
	}
	return nil
}

func (d *dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.muxFor(r).ServeHTTP(w, r)
}

// muxFor is the service mux for r's path when the patterns that could match it all belong to one
// service, and the mux of all routes otherwise. A pattern that matches a path fixes a prefix of
// its segments and (unless it holds **) their number, so looking up each prefix of the path, with
// the path's segment count and with an open count, finds every pattern's owner that could match.
func (d *dispatcher) muxFor(r *http.Request) http.Handler {
	path := r.URL.Path
	// An escaped path is split by the runtime in ways a prefix of Path does not tell; it is rare.
	if r.URL.RawPath != "" || !strings.HasPrefix(path, "/") {
		return d.all
	}
	segs := strings.Count(path, "/")
	rest := path[1:]
	found := shared
	end := -1 // the prefix looked up is rest[:end]; -1 is the empty one
	for depth := 0; depth <= d.maxDepth; depth++ {
		prefix := ""
		if depth > 0 {
			if end == len(rest) {
				break
			}
			start := end + 1
			if i := strings.IndexByte(rest[start:], '/'); i >= 0 {
				end = start + i
			} else {
				end = len(rest)
			}
			prefix = rest[:end]
		}
		for _, n := range [2]int{segs, openCount} {
			owner, ok := d.owners[routeKey{prefix, n}]
			if !ok {
				continue
			}
			if owner == shared || (found != shared && found != owner) {
				return d.all
			}
			found = owner
		}
	}
	if found == shared {
		return d.all
	}
	return d.shards[found]
}

// routeKey is what a path pattern fixes of every path it matches: its literal segments before the
// first variable, wildcard or verb ("v1/users" for /v1/users/{userId}), and how many segments it
// matches in all (openCount when a ** leaves that open).
type routeKey struct {
	prefix string
	segs   int
}

const openCount = -1

// keyOf reads a google.api.http path template ("/v1/users/{userId}", "/v1/{name=messages/*}",
// "/v1/things:verb").
func keyOf(template string) (routeKey, error) {
	if !strings.HasPrefix(template, "/") {
		return routeKey{}, fmt.Errorf("route template %q does not start with /", template)
	}
	var k routeKey
	literal := true
	for seg := range splitTemplate(template[1:]) {
		n := 1
		switch {
		case strings.HasPrefix(seg, "{"):
			inner, closed := strings.CutSuffix(seg[1:], "}")
			name, pattern, hasPattern := strings.Cut(inner, "=")
			if !closed || name == "" {
				return routeKey{}, fmt.Errorf("route template %q: variable %q", template, seg)
			}
			if hasPattern {
				n = strings.Count(pattern, "/") + 1
				if strings.Contains(pattern, "**") {
					n = openCount
				}
			}
			literal = false
		case seg == "**":
			n, literal = openCount, false
		case seg == "*" || strings.ContainsAny(seg, ":{}"):
			literal = false
		}
		if literal {
			if k.prefix != "" {
				k.prefix += "/"
			}
			k.prefix += seg
		}
		if n == openCount || k.segs == openCount {
			k.segs = openCount
		} else {
			k.segs += n
		}
	}
	return k, nil
}

// splitTemplate yields a template's segments, a variable ({name=a/*}) as one however many slashes
// its pattern holds.
func splitTemplate(t string) func(func(string) bool) {
	return func(yield func(string) bool) {
		depth, start := 0, 0
		for i := 0; i <= len(t); i++ {
			switch {
			case i == len(t) || (t[i] == '/' && depth == 0):
				if !yield(t[start:i]) {
					return
				}
				start = i + 1
			case t[i] == '{':
				depth++
			case t[i] == '}':
				depth--
			}
		}
	}
}
