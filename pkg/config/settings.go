package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Kind is how a setting is written and which values it accepts.
type Kind int

const (
	// Text is any value (a name, a token, a file path).
	Text Kind = iota
	// Addr is a listen or dial address, host:port with a numeric port.
	Addr
	// URL is an absolute URL: a scheme and a host.
	URL
	// Count is a whole number of at least 1.
	Count
	// Factor is a number greater than 0.
	Factor
	// Flag is true or false.
	Flag
	// Key is a secret of bytes written as hex or base64 (Setting.Size fixes its length).
	Key
	// Choice is one of Setting.Choices, in any case.
	Choice
)

var kindRules = map[Kind]string{
	Text:   "text",
	Addr:   "host:port",
	URL:    "an absolute URL",
	Count:  "a whole number of at least 1",
	Factor: "a number greater than 0",
	Flag:   "true or false",
	Key:    "hex or base64",
	Choice: "one of",
}

// Setting declares one environment variable a process reads: the host parses every declared
// setting once, before anything starts, and the configuration reference is generated from these
// declarations, so what a process accepts, refuses and documents is written in one place.
type Setting struct {
	Name string
	Kind Kind
	// Default is the value when the variable is unset or blank, written as in the environment;
	// "" means none.
	Default string
	// Required refuses to start when the variable is unset and there is no Default.
	Required bool
	// Secret keeps the value out of every error and log line.
	Secret bool
	// Size is a Key's length in bytes (0: any length).
	Size int
	// Choices are a Choice's values.
	Choices []string
	// Check adds a rule of the setting's own to its kind's (called on set values only).
	Check func(string) error
	// Doc says what the setting is for, in a sentence or two.
	Doc string
	// Hint tells how to come by a good value (e.g. the command that makes one); it ends the
	// refusal of a missing or bad value, so whoever reads the refusal knows the next step.
	Hint string
}

// Rule describes the values the setting accepts, for errors and the reference.
func (s Setting) Rule() string {
	switch s.Kind {
	case Choice:
		return "one of " + strings.Join(s.Choices, ", ")
	case Key:
		if s.Size > 0 {
			return fmt.Sprintf("%d bytes as hex or base64", s.Size)
		}
	}
	return kindRules[s.Kind]
}

// Values are a process's parsed settings. A lookup of a setting that was not declared panics: it is
// a programming error that every test of the process finds.
type Values struct {
	raw   map[string]string
	given map[string]bool
	kinds map[string]Kind
}

// Parse reads every declared setting from env, applies defaults and checks each value against its
// kind and rule. The error names every variable that is missing or bad, one per line, and never
// shows a secret's value. A name declared twice (by two modules of one process) must agree on its
// kind.
func Parse(env Env, decls ...[]Setting) (Values, error) {
	v := Values{raw: map[string]string{}, given: map[string]bool{}, kinds: map[string]Kind{}}
	var problems []error
	reported := map[string]bool{} // names with a problem already
	for _, list := range decls {
		for _, s := range list {
			if k, seen := v.kinds[s.Name]; seen {
				// Parsed already: a second declaration can only add that the value is required.
				if k != s.Kind {
					problems = append(problems, fmt.Errorf("%s is declared twice with different kinds", s.Name))
				} else if s.Required && v.raw[s.Name] == "" && !reported[s.Name] {
					problems = append(problems, s.withHint(fmt.Errorf("%s is required: %s", s.Name, s.Doc)))
				}
				reported[s.Name] = true
				continue
			}
			v.kinds[s.Name] = s.Kind
			raw := ""
			if env != nil {
				raw = strings.TrimSpace(env(s.Name))
			}
			v.given[s.Name] = raw != ""
			if raw == "" {
				raw = s.Default
			}
			if raw == "" {
				if s.Required {
					problems = append(problems, s.withHint(fmt.Errorf("%s is required: %s", s.Name, s.Doc)))
					reported[s.Name] = true
				}
				continue
			}
			if err := s.check(raw); err != nil {
				shown := strconv.Quote(raw)
				if s.Secret {
					shown = "(secret)"
				}
				problems = append(problems, s.withHint(fmt.Errorf("%s=%s: %v", s.Name, shown, err)))
				reported[s.Name] = true
				continue
			}
			v.raw[s.Name] = raw
		}
	}
	if len(problems) > 0 {
		return v, &InvalidError{Problems: problems}
	}
	return v, nil
}

// InvalidError is the refusal of a process's settings: one problem per variable. A process that
// finds settings wrong after Parse (the all-in-one checks its modules' settings once it knows its
// own) returns one too, so its host answers both the same way.
type InvalidError struct {
	Problems []error
}

func (e *InvalidError) Error() string { return errors.Join(e.Problems...).Error() }

// Within names who refused: each problem of a refusal gets prefix on its own line, so that every
// line still says where it comes from; any other error is wrapped once.
func Within(prefix string, err error) error {
	var inv *InvalidError
	if !errors.As(err, &inv) {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	problems := make([]error, len(inv.Problems))
	for i, p := range inv.Problems {
		problems[i] = fmt.Errorf("%s: %w", prefix, p)
	}
	return &InvalidError{Problems: problems}
}

// Join merges refusals into one, each problem once (two modules of one process may declare the
// same setting); nil when there are none.
func Join(errs ...error) error {
	var all []error
	seen := map[string]bool{}
	for _, err := range errs {
		var inv *InvalidError
		if err == nil {
			continue
		}
		problems := []error{err}
		if errors.As(err, &inv) {
			problems = inv.Problems
		}
		for _, p := range problems {
			if !seen[p.Error()] {
				seen[p.Error()] = true
				all = append(all, p)
			}
		}
	}
	if len(all) == 0 {
		return nil
	}
	return &InvalidError{Problems: all}
}

// withHint ends a refusal of the setting with its Hint, if it has one.
func (s Setting) withHint(refusal error) error {
	if s.Hint == "" {
		return refusal
	}
	return fmt.Errorf("%w; %s", refusal, s.Hint)
}

// check validates a set value against the setting's kind and its own rule.
func (s Setting) check(raw string) error {
	bad := fmt.Errorf("must be %s", s.Rule())
	switch s.Kind {
	case Addr:
		_, port, err := net.SplitHostPort(raw)
		if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
			return bad
		}
	case URL:
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return bad
		}
	case Count:
		if n, err := strconv.Atoi(raw); err != nil || n < 1 {
			return bad
		}
	case Factor:
		if f, err := strconv.ParseFloat(raw, 64); err != nil || !(f > 0) || f > 1e9 {
			return bad
		}
	case Flag:
		if _, err := strconv.ParseBool(raw); err != nil {
			return bad
		}
	case Key:
		b, err := decodeKey(raw)
		if err != nil || (s.Size > 0 && len(b) != s.Size) {
			return bad
		}
	case Choice:
		if !slices.ContainsFunc(s.Choices, func(c string) bool { return strings.EqualFold(c, raw) }) {
			return bad
		}
	}
	if s.Check != nil {
		return s.Check(raw)
	}
	return nil
}

// lookup returns the value of a declared setting ("" when unset without a default).
func (v Values) lookup(name string, kinds ...Kind) string {
	k, ok := v.kinds[name]
	if !ok || (len(kinds) > 0 && !slices.Contains(kinds, k)) {
		panic(fmt.Sprintf("config: %s is not declared as a setting of this process (or read as the wrong kind)", name))
	}
	return v.raw[name]
}

// String is the setting's value, or "" when it is unset without a default.
func (v Values) String(name string) string { return v.lookup(name) }

// Given reports whether the environment set the variable (rather than its default applying).
func (v Values) Given(name string) bool {
	v.lookup(name)
	return v.given[name]
}

// Int is a Count setting's value, 0 when unset.
func (v Values) Int(name string) int {
	n, _ := strconv.Atoi(v.lookup(name, Count))
	return n
}

// Float is a Factor setting's value, 0 when unset.
func (v Values) Float(name string) float64 {
	f, _ := strconv.ParseFloat(v.lookup(name, Factor), 64)
	return f
}

// Bool is a Flag setting's value, false when unset.
func (v Values) Bool(name string) bool {
	b, _ := strconv.ParseBool(v.lookup(name, Flag))
	return b
}

// Bytes is a Key setting's decoded value, nil when unset.
func (v Values) Bytes(name string) []byte {
	raw := v.lookup(name, Key)
	if raw == "" {
		return nil
	}
	b, _ := decodeKey(raw)
	return b
}

// Env is a lookup over the parsed values, for code that takes an Env (the TLS loader).
func (v Values) Env() Env { return func(name string) string { return v.raw[name] } }
