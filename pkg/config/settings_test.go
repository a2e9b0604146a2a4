package config

import (
	"errors"
	"strings"
	"testing"
)

func envMap(m map[string]string) Env { return func(name string) string { return m[name] } }

func TestEachKindAcceptsItsValuesAndRefusesOthers(t *testing.T) {
	for _, c := range []struct {
		setting Setting
		good    []string
		bad     []string
	}{
		{Setting{Kind: Text}, []string{"x", "a b"}, nil},
		{Setting{Kind: Addr}, []string{"127.0.0.1:8080", ":0", "[::1]:9101", "host:65535"}, []string{"8080", "host:http", "host:70000", "host:-1"}},
		{Setting{Kind: URL}, []string{"http://127.0.0.1:8080", "postgres://u@h/db", "nats://h:4222"}, []string{"127.0.0.1:8080", "/path", "http://", "::"}},
		{Setting{Kind: Count}, []string{"1", "13"}, []string{"0", "-2", "1.5", "many"}},
		{Setting{Kind: Factor}, []string{"1", "0.0001", "2.5"}, []string{"0", "-1", "NaN", "fast", "1e12"}},
		{Setting{Kind: Flag}, []string{"true", "false", "1", "0"}, []string{"yes", "on"}},
		{Setting{Kind: Key}, []string{"00ff", "AP8=", "AP8"}, []string{"not a key!"}},
		{Setting{Kind: Key, Size: 2}, []string{"00ff"}, []string{"00ff00"}},
		{Setting{Kind: Choice, Choices: []string{"info", "debug"}}, []string{"info", "DEBUG"}, []string{"trace", ""[:0] + "verbose"}},
		{Setting{Kind: Text, Check: func(s string) error {
			if strings.Contains(s, ",") {
				return errors.New("one value")
			}
			return nil
		}}, []string{"a"}, []string{"a,b"}},
	} {
		c.setting.Name = "BERTH_T"
		for _, v := range c.good {
			if _, err := Parse(envMap(map[string]string{"BERTH_T": v}), []Setting{c.setting}); err != nil {
				t.Errorf("kind %d refused %q: %v", c.setting.Kind, v, err)
			}
		}
		for _, v := range c.bad {
			if _, err := Parse(envMap(map[string]string{"BERTH_T": v}), []Setting{c.setting}); err == nil || !strings.HasPrefix(err.Error(), "BERTH_T=") {
				t.Errorf("kind %d accepted %q (error %v)", c.setting.Kind, v, err)
			}
		}
	}
}

func TestParseNamesEveryMissingOrBadVariableOnItsOwnLineAndHidesSecrets(t *testing.T) {
	decls := []Setting{
		{Name: "BERTH_A", Kind: URL, Required: true, Doc: "the a server"},
		{Name: "BERTH_B", Kind: Count},
		{Name: "BERTH_C", Kind: Key, Secret: true, Size: 32},
		{Name: "BERTH_D", Kind: Text, Default: "dee"},
	}
	_, err := Parse(envMap(map[string]string{"BERTH_B": "zero", "BERTH_C": "abcd"}), decls)
	if err == nil {
		t.Fatal("bad settings accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		"BERTH_A is required: the a server",
		`BERTH_B="zero": must be a whole number of at least 1`,
		"BERTH_C=(secret): must be 32 bytes as hex or base64",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("error lines:\n%s\nwant:\n%s", err, strings.Join(want, "\n"))
	}
	if strings.Contains(err.Error(), "abcd") {
		t.Fatal("a secret's value appears in the error")
	}
}

func TestValuesApplyDefaultsTrimAndTellGivenFromDefaulted(t *testing.T) {
	decls := []Setting{
		{Name: "BERTH_ADDR", Kind: Addr, Default: "127.0.0.1:8080"},
		{Name: "BERTH_N", Kind: Count, Default: "4"},
		{Name: "BERTH_F", Kind: Factor},
		{Name: "BERTH_ON", Kind: Flag},
		{Name: "BERTH_K", Kind: Key},
	}
	v, err := Parse(envMap(map[string]string{"BERTH_N": " 7 ", "BERTH_ON": "true", "BERTH_K": "0a0b"}), decls)
	if err != nil {
		t.Fatal(err)
	}
	if v.String("BERTH_ADDR") != "127.0.0.1:8080" || v.Given("BERTH_ADDR") {
		t.Errorf("default: %q given %v", v.String("BERTH_ADDR"), v.Given("BERTH_ADDR"))
	}
	if v.Int("BERTH_N") != 7 || !v.Given("BERTH_N") {
		t.Errorf("count: %d", v.Int("BERTH_N"))
	}
	if v.Float("BERTH_F") != 0 || !v.Bool("BERTH_ON") || string(v.Bytes("BERTH_K")) != "\x0a\x0b" {
		t.Errorf("factor %v flag %v key %x", v.Float("BERTH_F"), v.Bool("BERTH_ON"), v.Bytes("BERTH_K"))
	}
	if v.Env()("BERTH_N") != "7" {
		t.Errorf("Env view: %q", v.Env()("BERTH_N"))
	}
}

func TestReadingAnUndeclaredSettingPanics(t *testing.T) {
	v, _ := Parse(envMap(nil), []Setting{{Name: "BERTH_N", Kind: Count}})
	for name, read := range map[string]func(){
		"undeclared":    func() { v.String("BERTH_OTHER") },
		"as wrong kind": func() { v.Bytes("BERTH_N") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			read()
		}()
	}
}

func TestASettingTwoModulesDeclareIsParsedOnceAndRequiredIfEitherRequiresIt(t *testing.T) {
	shared := Setting{Name: "BERTH_PUBLIC", Kind: URL}
	required := shared
	required.Required = true
	if _, err := Parse(envMap(nil), []Setting{shared}, []Setting{required}); err == nil || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("err = %v, want one missing line", err)
	}
	if _, err := Parse(envMap(map[string]string{"BERTH_PUBLIC": "x"}), []Setting{required}, []Setting{required}); err == nil || strings.Count(err.Error(), "\n") != 0 {
		t.Fatalf("err = %v, want one bad line", err)
	}
	other := Setting{Name: "BERTH_PUBLIC", Kind: Count}
	if _, err := Parse(envMap(nil), []Setting{shared}, []Setting{other}); err == nil {
		t.Fatal("conflicting kinds accepted")
	}
}

func TestJoinedRefusalsNameEachProblemOnceAndStayRefusals(t *testing.T) {
	decl := []Setting{{Name: "BERTH_K", Kind: Key, Size: 32, Secret: true}}
	env := envMap(map[string]string{"BERTH_K": "abc"})
	_, first := Parse(env, decl)
	_, second := Parse(env, decl) // a second module declaring the same setting
	err := Join(first, nil, second, errors.New("BERTH_OTHER is wrong"))
	var inv *InvalidError
	if !errors.As(err, &inv) || len(inv.Problems) != 2 {
		t.Fatalf("Join = %#v, want a refusal with two problems", err)
	}
	if Join(nil, nil) != nil {
		t.Fatal("Join of nothing is not nil")
	}
}

func TestWithinPrefixesEveryLineOfARefusalAndWrapsAnyOtherError(t *testing.T) {
	refusal := &InvalidError{Problems: []error{errors.New("A is bad"), errors.New("B is bad")}}
	other := errors.New("disk full")
	cases := []struct {
		name    string
		err     error
		want    string
		refused bool
	}{
		{"refusal", refusal, "identity: A is bad\nidentity: B is bad", true},
		{"other", other, "identity: disk full", false},
	}
	for _, c := range cases {
		got := Within("identity", c.err)
		var inv *InvalidError
		if got.Error() != c.want || errors.As(got, &inv) != c.refused || !errors.Is(got, c.err) && !c.refused {
			t.Errorf("%s: Within = %q (refusal %v), want %q (refusal %v)", c.name, got, errors.As(got, &inv), c.want, c.refused)
		}
	}
}

func TestARefusalEndsWithTheSettingsHintOnTheSameLine(t *testing.T) {
	decls := []Setting{
		{Name: "BERTH_K", Kind: Key, Size: 4, Secret: true, Required: true, Doc: "a key", Hint: "make one with: mk"},
		{Name: "BERTH_N", Kind: Count, Doc: "a count"},
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"missing", nil, "BERTH_K is required: a key; make one with: mk"},
		{"bad", map[string]string{"BERTH_K": "00"}, "BERTH_K=(secret): must be 4 bytes as hex or base64; make one with: mk"},
		{"no hint", map[string]string{"BERTH_K": "00ff00ff", "BERTH_N": "x"}, `BERTH_N="x": must be a whole number of at least 1`},
	} {
		if _, err := Parse(envMap(c.env), decls); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestTheReferenceRowOfASettingWithAHintSaysItToo(t *testing.T) {
	var b strings.Builder
	err := WriteReference(&b, []Section{{Title: "T", Settings: []Setting{
		{Name: "BERTH_K", Kind: Key, Doc: "a key", Hint: "make one with: mk"},
		{Name: "BERTH_N", Kind: Count, Doc: "a count"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| a key (make one with: mk) |", "| a count |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("reference lacks %q:\n%s", want, b.String())
		}
	}
}
