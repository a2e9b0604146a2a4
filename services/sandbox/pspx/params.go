package pspx

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// maxDepth bounds key nesting: the deepest key Berth sends is line_items[0][tax_rates][0].
const maxDepth = 6

// params is a request's parameters decoded into the provider's nested shape: a[b][0]=x is the
// value x under a → b → 0, and a[]=x appends x to the list a. Handlers read what they accept
// through the getters, which remember every value read; done then reports a value of the wrong
// type or, like the provider, the first parameter nobody read as unknown.
type params struct {
	root *pnode
	err  *apiError // first malformed value met by a getter
}

type pnode struct {
	leaf bool
	val  string
	kids map[string]*pnode
	used bool
}

// parseParams decodes a form body or query string. Keys are applied in sorted order, so the
// result does not depend on the order the client sent them in; a repeated plain key keeps its
// last value.
func parseParams(raw string) (*params, *apiError) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, errInvalid("", "Invalid request: the body is not valid form encoding (%v).", err)
	}
	p := &params{root: &pnode{kids: map[string]*pnode{}}}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		segs, ok := splitKey(k)
		if !ok {
			return nil, errInvalid(k, "Invalid parameter name: %s", k)
		}
		for _, v := range vals[k] {
			if !p.root.set(segs, v) {
				return nil, errInvalid(k, "Invalid parameter %s: it is used both as a value and as a hash or array.", k)
			}
		}
	}
	return p, nil
}

// splitKey splits name[a][b] into its segments; only the last segment may be empty ([] appends).
func splitKey(k string) ([]string, bool) {
	name, rest, nested := strings.Cut(k, "[")
	if name == "" || strings.Contains(name, "]") {
		return nil, false
	}
	segs := []string{name}
	if !nested {
		return segs, true
	}
	rest = "[" + rest
	for rest != "" {
		if rest[0] != '[' {
			return nil, false
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return nil, false
		}
		seg := rest[1:end]
		if strings.Contains(seg, "[") {
			return nil, false
		}
		rest = rest[end+1:]
		if seg == "" && rest != "" {
			return nil, false
		}
		segs = append(segs, seg)
		if len(segs) > maxDepth {
			return nil, false
		}
	}
	return segs, true
}

func (n *pnode) set(segs []string, v string) bool {
	for i, seg := range segs {
		if n.leaf {
			return false
		}
		if seg == "" {
			seg = strconv.Itoa(len(n.kids))
			if n.kids[seg] != nil {
				return false
			}
		}
		kid := n.kids[seg]
		if i == len(segs)-1 {
			if kid != nil && !kid.leaf {
				return false
			}
			n.kids[seg] = &pnode{leaf: true, val: v}
			return true
		}
		if kid == nil {
			kid = &pnode{kids: map[string]*pnode{}}
			n.kids[seg] = kid
		}
		n = kid
	}
	return true
}

// name renders a path the way the provider names parameters: a[b][0].
func name(path []string) string {
	var b strings.Builder
	b.WriteString(path[0])
	for _, s := range path[1:] {
		b.WriteString("[" + s + "]")
	}
	return b.String()
}

func (p *params) node(path []string) *pnode {
	n := p.root
	for _, seg := range path {
		if n.leaf {
			return nil
		}
		if n = n.kids[seg]; n == nil {
			return nil
		}
	}
	return n
}

func (p *params) fail(e *apiError) {
	if p.err == nil {
		p.err = e
	}
}

// has reports whether the parameter was sent at all (as a value or a hash).
func (p *params) has(path ...string) bool { return p.node(path) != nil }

// str returns a string parameter and whether it was sent.
func (p *params) str(path ...string) (string, bool) {
	n := p.node(path)
	if n == nil {
		return "", false
	}
	if !n.leaf {
		p.fail(errInvalid(name(path), "Invalid string: %s must be a string, not a hash or array.", name(path)))
		markUsed(n)
		return "", false
	}
	n.used = true
	return n.val, true
}

// text returns a string parameter, "" when absent.
func (p *params) text(path ...string) string {
	v, _ := p.str(path...)
	return v
}

// integer returns an integer parameter and whether it was sent.
func (p *params) integer(path ...string) (int64, bool) {
	v, ok := p.str(path...)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		p.fail(invalidRequest(400, "parameter_invalid_integer", name(path), "Invalid integer: %s", v))
		return 0, false
	}
	return i, true
}

// boolean returns a boolean parameter and whether it was sent.
func (p *params) boolean(path ...string) (bool, bool) {
	v, ok := p.str(path...)
	if !ok {
		return false, false
	}
	switch v {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	p.fail(errInvalid(name(path), "Invalid boolean: %s", v))
	return false, false
}

// decimal reads a non-negative decimal with at most four fractional digits, in ten-thousandths.
func (p *params) decimal(path ...string) (int64, bool) {
	v, ok := p.str(path...)
	if !ok {
		return 0, false
	}
	whole, frac, _ := strings.Cut(v, ".")
	w, err1 := strconv.ParseUint(whole, 10, 32)
	f, err2 := strconv.ParseUint(frac+strings.Repeat("0", max(0, 4-len(frac))), 10, 32)
	if whole == "" || err1 != nil || err2 != nil || len(frac) > 4 || strings.ContainsAny(v, "+-") {
		p.fail(errInvalid(name(path), "Invalid decimal: %s", v))
		return 0, false
	}
	return int64(w)*10000 + int64(f), true
}

// indices returns the indices of an array parameter in numeric order. An empty string value
// (a[]= or a=) is the provider's way of sending an empty array.
func (p *params) indices(path ...string) ([]string, bool) {
	n := p.node(path)
	if n == nil {
		return nil, false
	}
	if n.leaf {
		n.used = true
		if n.val != "" {
			p.fail(errInvalid(name(path), "Invalid array: %s must be an array.", name(path)))
		}
		return nil, true
	}
	idx := make([]string, 0, len(n.kids))
	for k := range n.kids {
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || strconv.Itoa(i) != k {
			p.fail(errInvalid(name(path), "Invalid array: %s must be an array.", name(path)))
			markUsed(n)
			return nil, true
		}
		idx = append(idx, k)
	}
	slices.SortFunc(idx, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
	return idx, true
}

// list returns an array of strings.
func (p *params) list(path ...string) ([]string, bool) {
	idx, ok := p.indices(path...)
	var out []string
	for _, i := range idx {
		if v, ok := p.str(append(slices.Clone(path), i)...); ok {
			out = append(out, v)
		}
	}
	return out, ok
}

// metadata reads a metadata hash within the provider's limits. An empty string value
// (metadata=) asks to clear every key; within the hash an empty value removes that key.
func (p *params) metadata(path ...string) (set map[string]string, clearAll, ok bool) {
	n := p.node(path)
	if n == nil {
		return nil, false, false
	}
	param := name(path)
	if n.leaf {
		n.used = true
		if n.val != "" {
			p.fail(errInvalid(param, "Invalid hash: %s must be a hash.", param))
		}
		return nil, true, true
	}
	if len(n.kids) > 50 {
		p.fail(errInvalid(param, "Metadata can have at most 50 keys."))
	}
	set = map[string]string{}
	for k, kid := range n.kids {
		markUsed(kid)
		switch {
		case !kid.leaf:
			p.fail(errInvalid(param+"["+k+"]", "Metadata values must be strings."))
		case len(k) > 40:
			p.fail(errInvalid(param+"["+k+"]", "Metadata keys can be at most 40 characters long."))
		case len(kid.val) > 500:
			p.fail(errInvalid(param+"["+k+"]", "Metadata values can be at most 500 characters long."))
		default:
			set[k] = kid.val
		}
	}
	return set, false, true
}

// done reports the first malformed value, else the first parameter no getter read.
func (p *params) done() *apiError {
	if p.err != nil {
		return p.err
	}
	if path := unused(p.root, nil); path != nil {
		return errUnknownParam(name(path))
	}
	return nil
}

func unused(n *pnode, path []string) []string {
	if n.leaf {
		if n.used {
			return nil
		}
		return path
	}
	keys := make([]string, 0, len(n.kids))
	for k := range n.kids {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if u := unused(n.kids[k], append(slices.Clone(path), k)); u != nil {
			return u
		}
	}
	return nil
}

func markUsed(n *pnode) {
	n.used = true
	for _, k := range n.kids {
		markUsed(k)
	}
}

// canonical is the parameters as sorted form encoding, the identity idempotent replay compares.
func canonical(raw string) string {
	vals, _ := url.ParseQuery(raw)
	return vals.Encode()
}
