package pspx

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// form builds a request body in the provider's form encoding: nested parameters are written as
// bracketed keys (metadata[tenantId], line_items[0][price]), and the body is encoded with its
// keys sorted, so one call always sends the same bytes and an idempotent retry is identical.
type form struct {
	vals url.Values
	err  error
}

func newForm() *form { return &form{vals: url.Values{}} }

// set sends a value even when it is empty: "" is how the provider is told to clear a field.
func (f *form) set(key, value string) { f.vals.Add(key, value) }

// opt sends a value only when there is one.
func (f *form) opt(key, value string) {
	if value != "" {
		f.vals.Add(key, value)
	}
}

// positive sends an integer only when it is above zero (zero means "not given" in the port).
func (f *form) positive(key string, v int64) {
	if v > 0 {
		f.vals.Add(key, strconv.FormatInt(v, 10))
	}
}

func (f *form) int(key string, v int64) { f.vals.Add(key, strconv.FormatInt(v, 10)) }

func (f *form) bool(key string, v bool) { f.vals.Add(key, strconv.FormatBool(v)) }

// percent sends a percentage with at most the four decimals the provider accepts.
func (f *form) percent(key string, v float64) {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	f.vals.Add(key, s)
}

// meta sends metadata as prefix[key]=value. A key with brackets would be read back as nesting,
// and an empty key is no key, so both are refused before anything is sent.
func (f *form) meta(prefix string, m map[string]string) {
	for k, v := range m {
		if k == "" || strings.ContainsAny(k, "[]") {
			f.err = errors.Join(f.err, errors.New("pspx: metadata key "+strconv.Quote(k)+" cannot be sent (empty or with brackets)"))
			continue
		}
		f.vals.Add(prefix+"["+k+"]", v)
	}
}

// encode returns the body, sorted by key.
func (f *form) encode() (string, error) {
	if f.err != nil {
		return "", f.err
	}
	return f.vals.Encode(), nil
}
