package eventsv1

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Type is an event type, "<context>.<name>" such as "identity.user.updated"; its NATS subject is
// "<prefix>.<type>". It is a defined type so that code names events by the generated constants
// (a string literal does not compile where a Type is wanted by accident of a typo); the catalog
// check in pkg/events refuses an undeclared one at run time as well.
type Type string

// Declaration is one declared event type and the payload message that declares it.
type Declaration struct {
	Type    Type
	Payload protoreflect.MessageDescriptor
}

// Context is the bounded context an event type belongs to, its first segment: "identity".
func (d Declaration) Context() string {
	c, _, _ := strings.Cut(string(d.Type), ".")
	return c
}

// typeSyntax is what a declared type may look like: lower-case tokens, at least two, which are
// valid NATS subject tokens and leave the wildcards and separators to the bus.
var typeSyntax = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// Declarations reads the event option of every message in files, nested messages included, and
// returns the declared types with their payloads, sorted by type. It fails, naming every offence,
// when a type is malformed, belongs to another context than the declaring package
// (berth.<context>.v1), or is declared twice: each event type must map to one payload and one
// stream.
func Declarations(files *protoregistry.Files) ([]Declaration, error) {
	var decls []Declaration
	var errs []error
	var walk func(protoreflect.MessageDescriptors)
	walk = func(mds protoreflect.MessageDescriptors) {
		for i := range mds.Len() {
			md := mds.Get(i)
			for _, t := range Of(md) {
				d := Declaration{Type: t, Payload: md}
				if err := d.check(); err != nil {
					errs = append(errs, err)
					continue
				}
				decls = append(decls, d)
			}
			walk(md.Messages())
		}
	}
	files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		walk(fd.Messages())
		return true
	})
	slices.SortFunc(decls, func(a, b Declaration) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Payload.FullName(), b.Payload.FullName()))
	})
	for i := 1; i < len(decls); i++ {
		if decls[i].Type == decls[i-1].Type {
			errs = append(errs, fmt.Errorf("event type %q is declared by both %s and %s", decls[i].Type, decls[i-1].Payload.FullName(), decls[i].Payload.FullName()))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return decls, nil
}

// Of returns the event types a message declares, nil when it carries no event option.
func Of(md protoreflect.MessageDescriptor) []Type {
	opts := md.Options()
	if opts == nil || !proto.HasExtension(opts, E_Event) {
		return nil
	}
	ev, _ := proto.GetExtension(opts, E_Event).(*Event)
	types := make([]Type, len(ev.GetTypes()))
	for i, t := range ev.GetTypes() {
		types[i] = Type(t)
	}
	return types
}

func (d Declaration) check() error {
	if !typeSyntax.MatchString(string(d.Type)) {
		return fmt.Errorf("%s declares event type %q, which is not <context>.<name> in lower-case tokens", d.Payload.FullName(), d.Type)
	}
	pkg := strings.Split(string(d.Payload.ParentFile().Package()), ".")
	if len(pkg) != 3 || pkg[0] != "berth" || pkg[1] != d.Context() {
		return fmt.Errorf("%s declares event type %q outside a berth.%s.* package: a context publishes only its own events", d.Payload.FullName(), d.Type, d.Context())
	}
	return nil
}
