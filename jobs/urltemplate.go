package jobs

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/template"
	tmplparse "text/template/parse"
)

// urlValueFunc is the function ExpandURL appends to every action of a URL
// template, so that the action's value is escaped for where it lands.
const urlValueFunc = "_url_value"

// urlText is text a URL template inserts without escaping: what the
// template function raw returns, and urlquery in a URL.
type urlText string

// urlValue is the value of one action of a URL template.
type urlValue struct {
	text     string
	verbatim bool // urlText: inserted as it is
}

// ExpandURL expands text as a URL template over v, as Expand does, with
// each action's value escaped for the part of the URL it lands in. The
// part is decided by the URL written before the value:
//
//   - in the scheme and host (before the path starts), such as
//     "{{.Params.base}}/items", the value is a URL or a host: characters
//     that are never valid in a URL (space, quotes, control characters,
//     non-ASCII, …) are percent-encoded and the rest is kept, so that a
//     whole URL may come from a parameter;
//   - in the path, such as "/items/{{.Params.name}}", the value is one path
//     segment, escaped as url.PathEscape does: "a/b c" becomes "a%2Fb%20c";
//   - in the query, such as "?q={{.Params.q}}", the value is a query key
//     or value, escaped as url.QueryEscape does: "a&b c" becomes
//     "a%26b+c";
//   - in the fragment, it is escaped as a path segment.
//
// The value of an action that ends in urlquery, or in raw (which returns
// its argument as it is), is already URL text and is inserted unchanged:
// "/{{raw .Params.path}}" keeps the slashes of "v1/items". A URL
// template whose literal text holds a NUL byte is refused.
func ExpandURL(name, text string, v Vars) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	if strings.IndexByte(text, 0) >= 0 {
		return "", &FieldError{Field: name, Message: "holds a NUL byte"}
	}
	var values []urlValue
	kept := 0 // bytes of values, bounded as an expansion is
	// Each action's value is kept aside and replaced in the output by its
	// index between NUL bytes, so that it is escaped once the URL written
	// before it is known.
	mark := func(v any) (string, error) {
		u, verbatim := v.(urlText)
		text := string(u)
		if !verbatim {
			text = fmt.Sprint(v)
		}
		if kept += len(text); kept > MaxExpansion {
			return "", errTooLong
		}
		values = append(values, urlValue{text: text, verbatim: verbatim})
		return "\x00" + strconv.Itoa(len(values)-1) + "\x00", nil
	}
	t, err := parseURL(name, text, mark)
	if err != nil {
		return "", err
	}
	b := &boundedBuilder{max: MaxExpansion}
	if err := t.Funcs(secretFuncs(v)).Execute(b, v); err != nil {
		return "", expandError(name, err)
	}
	parts := strings.Split(b.String(), "\x00")
	var out strings.Builder
	for i, p := range parts {
		if i%2 == 0 {
			out.WriteString(p) // the template's own text
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n >= len(values) {
			return "", &FieldError{Field: name, Message: "an action wrote a NUL byte"}
		}
		value := values[n].text
		if !values[n].verbatim {
			value = escapeURLValue(urlPartOf(out.String()), value)
		}
		out.WriteString(value)
	}
	return out.String(), nil
}

// parseURL parses text as Expand does, and appends mark to every action
// that writes output.
func parseURL(name, text string, mark func(any) (string, error)) (*template.Template, error) {
	t, err := parse(name, text)
	if err != nil {
		return nil, err
	}
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			markActions(tt.Tree, tt.Tree.Root)
		}
	}
	// Functions named after parsing are found when the template runs:
	// mark, and a urlquery whose result is not escaped again.
	return t.Funcs(template.FuncMap{
		urlValueFunc: mark,
		"urlquery":   func(args ...any) urlText { return urlText(url.QueryEscape(evalArgs(args))) },
	}), nil
}

// evalArgs formats a function's arguments as text/template's urlquery
// does.
func evalArgs(args []any) string {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			return s
		}
	}
	return fmt.Sprint(args...)
}

// markActions appends urlValueFunc to the pipeline of every action under
// node that writes output.
func markActions(tree *tmplparse.Tree, node tmplparse.Node) {
	switch n := node.(type) {
	case *tmplparse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			markActions(tree, c)
		}
	case *tmplparse.ActionNode:
		if len(n.Pipe.Decl) == 0 { // {{$x := …}} writes nothing
			id := tmplparse.NewIdentifier(urlValueFunc).SetTree(tree).SetPos(n.Pos)
			n.Pipe.Cmds = append(n.Pipe.Cmds, &tmplparse.CommandNode{NodeType: tmplparse.NodeCommand, Pos: n.Pos, Args: []tmplparse.Node{id}})
		}
	case *tmplparse.IfNode:
		markActions(tree, n.List)
		markActions(tree, n.ElseList)
	case *tmplparse.RangeNode:
		markActions(tree, n.List)
		markActions(tree, n.ElseList)
	case *tmplparse.WithNode:
		markActions(tree, n.List)
		markActions(tree, n.ElseList)
	}
}

// urlPart is the part of a URL a value lands in.
type urlPart int

const (
	partAuthority urlPart = iota // the scheme and host
	partPath
	partQuery
	partFragment
)

// urlPartOf returns the part of a URL that text written so far ends in.
func urlPartOf(before string) urlPart {
	switch {
	case strings.Contains(before, "#"):
		return partFragment
	case strings.Contains(before, "?"):
		return partQuery
	}
	rest := before
	if _, after, ok := strings.Cut(before, "://"); ok {
		rest = after
	}
	if strings.Contains(rest, "/") {
		return partPath
	}
	return partAuthority
}

// escapeURLValue escapes a value for the part of a URL it lands in.
func escapeURLValue(part urlPart, value string) string {
	switch part {
	case partPath, partFragment:
		return url.PathEscape(value)
	case partQuery:
		return url.QueryEscape(value)
	}
	return normalizeURL(value)
}

// normalizeURL percent-encodes the bytes of s that are never valid in a
// URL, and keeps the rest: letters, digits, "-._~", the reserved
// characters and '%'.
func normalizeURL(s string) string {
	const keep = "-._~:/?#[]@!$&'()*+,;=%"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
