package protocopy_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/berthhq/berth/pkg/protocopy"
)

func TestCopyFillsSameNamedScalarsExceptTheExplicitOnes(t *testing.T) {
	all := protocopy.Same(&durationpb.Duration{}, &timestamppb.Timestamp{})
	if err := all.Check(); err != nil {
		t.Fatal(err)
	}
	got := &durationpb.Duration{}
	all.Copy(got, &timestamppb.Timestamp{Seconds: 7, Nanos: 9})
	if want := (&durationpb.Duration{Seconds: 7, Nanos: 9}); !proto.Equal(got, want) {
		t.Fatalf("copied %v, want %v", got, want)
	}

	secondsOnly := protocopy.Same(&durationpb.Duration{}, &timestamppb.Timestamp{}, "nanos")
	got = &durationpb.Duration{Nanos: 1}
	secondsOnly.Copy(got, &timestamppb.Timestamp{Seconds: 7, Nanos: 9})
	if want := (&durationpb.Duration{Seconds: 7, Nanos: 1}); !proto.Equal(got, want) {
		t.Fatalf("copied %v, want %v: an explicit field is left to the caller", got, want)
	}
}

func TestCopyLeavesUnpopulatedAndNilSourcesAlone(t *testing.T) {
	f := protocopy.Same(&durationpb.Duration{}, &timestamppb.Timestamp{})
	got := &durationpb.Duration{Seconds: 3}
	f.Copy(got, &timestamppb.Timestamp{Nanos: 9})
	f.Copy(got, (*timestamppb.Timestamp)(nil))
	if want := (&durationpb.Duration{Seconds: 3, Nanos: 9}); !proto.Equal(got, want) {
		t.Fatalf("copied %v, want %v", got, want)
	}
}

// A renamed or retyped source field must fail the Check a test runs, not leave a field empty.
func TestCheckReportsTargetFieldsTheSourceCannotFill(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fields   *protocopy.Fields
		wantText string
	}{
		{"missing in the source", protocopy.Same(&wrapperspb.Int64Value{}, &durationpb.Duration{}), "value has no counterpart"},
		{"another kind", protocopy.Same(&wrapperspb.StringValue{}, &wrapperspb.Int32Value{}), "value is a string"},
		{"stale explicit name", protocopy.Same(&durationpb.Duration{}, &timestamppb.Timestamp{}, "nanoseconds"), "no field nanoseconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.fields.Check()
			if err == nil || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("Check = %v, want an error mentioning %q", err, tc.wantText)
			}
		})
	}
}
