package oidc

import (
	"encoding/json"
	"testing"
)

func TestEmailVerifiedReadsBooleansAndTheirStringsAndRefusesAnythingElse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    bool
		wantErr bool
	}{
		{`true`, true, false},
		{`"true"`, true, false},
		{`false`, false, false},
		{`"false"`, false, false},
		{`null`, false, false},
		{`"yes"`, false, true},
		{`1`, false, true},
		{`"TRUE"`, false, true},
	} {
		var v struct {
			V flexBool `json:"v"`
		}
		err := json.Unmarshal([]byte(`{"v":`+tc.in+`}`), &v)
		if (err != nil) != tc.wantErr || bool(v.V) != tc.want {
			t.Errorf("%s: %v, %v; want %v (error %v)", tc.in, bool(v.V), err, tc.want, tc.wantErr)
		}
	}
}
