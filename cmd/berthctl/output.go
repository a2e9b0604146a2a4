package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// empty is how a table shows empty text and an absent value, everywhere.
const empty = "-"

// render prints a result as format says: "json", "table", or "" for a table on a terminal and JSON
// otherwise (a script's pipe). Both show the same fields, every one of them, zeros included.
func render(out io.Writer, res proto.Message, format string) error {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}.Marshal(res)
	if err != nil {
		return err
	}
	if format == "" && !isTerminal(out) || format == "json" {
		// Indented here rather than by protojson, whose spacing varies on purpose.
		var indented bytes.Buffer
		if err := json.Indent(&indented, b, "", "  "); err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, indented.String())
		return err
	}
	// The table reads the JSON form, so that both write each value alike (enums by name, times
	// in RFC 3339), and the descriptor, so that fields keep their declared order.
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	return writeTable(out, res.ProtoReflect().Descriptor(), doc)
}

// isTerminal reports whether out is a terminal.
func isTerminal(out io.Writer) bool {
	f, ok := out.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// writeTable prints a message's single values as "field value" lines, then each list of messages
// as a table with a column per field; a message that is only a list prints just that table.
func writeTable(out io.Writer, md protoreflect.MessageDescriptor, doc map[string]any) error {
	var pairs [][2]string
	var lists []protoreflect.FieldDescriptor
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		if fd.IsList() && fd.Kind() == protoreflect.MessageKind {
			lists = append(lists, fd)
			continue
		}
		pairs = append(pairs, flatten(fd, doc[string(fd.Name())], string(fd.Name()))...)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	for _, p := range pairs {
		_, _ = fmt.Fprintf(tw, "%s\t%s\n", p[0], p[1]) // a tabwriter reports write errors at Flush
	}
	_ = tw.Flush() // into a strings.Builder, which never fails
	for _, fd := range lists {
		items, _ := doc[string(fd.Name())].([]any)
		if len(pairs) > 0 || len(lists) > 1 {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s:\n", fd.Name())
		}
		if len(items) == 0 {
			fmt.Fprintf(&b, "no %s\n", fd.Name())
			continue
		}
		writeRows(&b, fd.Message(), items)
	}
	if b.Len() == 0 {
		b.WriteString("done\n") // an empty answer: the call succeeded
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// writeRows prints list items as a table: a header of the item's flattened fields, a row each.
func writeRows(b *strings.Builder, md protoreflect.MessageDescriptor, items []any) {
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	for i, item := range items {
		obj, _ := item.(map[string]any)
		var header, row []string
		for j := range md.Fields().Len() {
			fd := md.Fields().Get(j)
			for _, p := range flatten(fd, obj[string(fd.Name())], string(fd.Name())) {
				header, row = append(header, p[0]), append(row, p[1])
			}
		}
		if i == 0 {
			_, _ = fmt.Fprintln(tw, strings.Join(header, "\t")) // a tabwriter reports write errors at Flush
		}
		_, _ = fmt.Fprintln(tw, strings.Join(row, "\t")) // a tabwriter reports write errors at Flush
	}
	_ = tw.Flush() // into a strings.Builder, which never fails
}

// flatten writes a field's value as name/text pairs: a nested message's fields as name.field, a
// list of values joined with commas, a list of messages inside a row as its JSON.
func flatten(fd protoreflect.FieldDescriptor, v any, name string) [][2]string {
	if obj, ok := v.(map[string]any); ok && fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap() {
		var pairs [][2]string
		md := fd.Message()
		for i := range md.Fields().Len() {
			sub := md.Fields().Get(i)
			pairs = append(pairs, flatten(sub, obj[string(sub.Name())], name+"."+string(sub.Name()))...)
		}
		return pairs
	}
	return [][2]string{{name, text(v)}}
}

// text writes one value for a table cell.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return empty
	case string:
		if v == "" {
			return empty
		}
		return v
	case []any:
		if len(v) == 0 {
			return empty
		}
		parts := make([]string, len(v))
		for i, e := range v {
			if _, isObj := e.(map[string]any); isObj {
				b, _ := json.Marshal(v) // decoded from JSON: encodes again
				return string(b)
			}
			parts[i] = text(e)
		}
		return strings.Join(parts, ",")
	case map[string]any:
		b, _ := json.Marshal(v) // decoded from JSON: encodes again
		return string(b)
	default:
		return fmt.Sprint(v)
	}
}
