package locale

import (
	"slices"
	"text/template/parse"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
)

// languages maps each language Berth speaks to its messages (en.go, de.go).
var languages = map[string]map[string]string{
	English: english,
	German:  german,
}

// printers hold one formatter per language over the catalog built from the message maps.
var printers = func() map[string]*message.Printer {
	b := catalog.NewBuilder(catalog.Fallback(language.English))
	out := map[string]*message.Printer{}
	for lang, msgs := range languages {
		tag := language.MustParse(lang)
		for key, text := range msgs {
			// SetString fails only for a malformed tag or message, which the tests would catch.
			if err := b.SetString(tag, key, text); err != nil {
				panic("locale: message " + key + ": " + err.Error())
			}
		}
		out[lang] = message.NewPrinter(tag, message.Catalog(b))
	}
	return out
}()

// Printer renders the messages of one language. The zero value speaks English. It is safe for
// concurrent use.
type Printer struct {
	lang string
}

// For returns the printer of lang, a code Choose returned; any other value gets English.
func For(lang string) Printer {
	if _, ok := languages[lang]; !ok {
		lang = English
	}
	return Printer{lang: lang}
}

// Lang is the printer's language code (en or de), for <html lang> and mails.
func (p Printer) Lang() string {
	if p.lang == "" {
		return English
	}
	return p.lang
}

// T is the message key in the printer's language with args formatted into its verbs. A key the
// catalog lacks comes back as the key itself, so a mistake shows on the page rather than as an
// empty line; UnknownKeys and the catalog's tests keep that from shipping.
func (p Printer) T(key string, args ...any) string {
	if _, ok := languages[p.Lang()][key]; !ok {
		return key
	}
	return printers[p.Lang()].Sprintf(key, args...)
}

// Has reports whether the catalog holds key.
func Has(key string) bool {
	_, ok := english[key]
	return ok
}

// UnknownKeys lists the keys that templates use (a call .T "key" or $.T "key" on the view's
// printer) and the catalog lacks, sorted and unique. Pass each template's Tree (every template a
// set defines); nil trees are skipped.
func UnknownKeys(trees ...*parse.Tree) []string {
	var out []string
	for _, t := range trees {
		if t == nil || t.Root == nil {
			continue
		}
		walk(t.Root, func(key string) {
			if !Has(key) {
				out = append(out, key)
			}
		})
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// walk calls found with the key of every printer call under n.
func walk(n parse.Node, found func(string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walk(c, found)
		}
	case *parse.ActionNode:
		walk(n.Pipe, found)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walk(c, found)
		}
	case *parse.CommandNode:
		if len(n.Args) >= 2 && isPrinterCall(n.Args[0]) {
			if s, ok := n.Args[1].(*parse.StringNode); ok {
				found(s.Text)
			}
		}
		for _, a := range n.Args {
			walk(a, found)
		}
	case *parse.IfNode:
		walkBranch(&n.BranchNode, found)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, found)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, found)
	case *parse.TemplateNode:
		walk(n.Pipe, found)
	}
}

func walkBranch(b *parse.BranchNode, found func(string)) {
	walk(b.Pipe, found)
	walk(b.List, found)
	walk(b.ElseList, found)
}

// isPrinterCall reports whether n is .T, $.T or .Field.T: a call of a view's printer.
func isPrinterCall(n parse.Node) bool {
	switch n := n.(type) {
	case *parse.FieldNode:
		return n.Ident[len(n.Ident)-1] == "T"
	case *parse.VariableNode:
		return len(n.Ident) > 1 && n.Ident[len(n.Ident)-1] == "T"
	case *parse.ChainNode:
		return len(n.Field) > 0 && n.Field[len(n.Field)-1] == "T"
	}
	return false
}
