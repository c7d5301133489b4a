package jobs

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"text/template"
	tmplparse "text/template/parse"
)

// secretFunc is the name of the template function that inserts a secret's
// value: {{secret "name"}}.
const secretFunc = "secret"

// SecretLookup returns the value of the secret called name. The server
// sets one on the Vars of each firing; it reads the secret when the job
// fires, on the node that runs it.
type SecretLookup func(name string) (string, error)

// ErrNoSecrets is returned for a {{secret}} reference expanded with Vars
// whose Secrets is nil.
var ErrNoSecrets = errors.New("no secrets are available to this template")

// SecretError is the error of a {{secret "name"}} action that could not be
// expanded: the secret is not defined, or cannot be read. Expand and
// ExpandURL return it inside a *FieldError naming the field.
type SecretError struct {
	// Name is the secret's name.
	Name string
	// Err says why; the lookup's error.
	Err error
}

// Error returns the lookup's error, which names the secret.
func (e *SecretError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("secret %q cannot be read", e.Name)
	}
	return e.Err.Error()
}

// Unwrap returns the lookup's error.
func (e *SecretError) Unwrap() error { return e.Err }

// secretFuncs returns the secret function of a template expanded over v.
func secretFuncs(v Vars) template.FuncMap {
	return template.FuncMap{secretFunc: func(name string) (string, error) {
		if v.Secrets == nil {
			return "", &SecretError{Name: name, Err: fmt.Errorf("secret %q: %w", name, ErrNoSecrets)}
		}
		value, err := v.Secrets(name)
		if err != nil {
			return "", &SecretError{Name: name, Err: err}
		}
		return value, nil
	}}
}

// SecretNames returns the names of the secrets text refers to with
// {{secret "name"}}, sorted and without repeats, after checking that text
// parses as CheckTemplate does. The server uses it to refuse a job that
// refers to a secret that does not exist, and to tell which jobs use a
// secret.
func SecretNames(name, text string) ([]string, error) {
	if !strings.Contains(text, "{{") {
		return nil, nil
	}
	t, err := parse(name, text)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walkSecretCalls(tt.Tree.Root, func(c *tmplparse.CommandNode) {
				if s, ok := c.Args[1].(*tmplparse.StringNode); ok {
					names = append(names, s.Text)
				}
			})
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// checkSecretCalls refuses a {{secret}} call whose argument is not one
// quoted name: a name computed at firing time could not be checked when
// the job is saved, and would let a run's parameters pick any secret.
func checkSecretCalls(name string, t *template.Template) error {
	var bad string
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		walkSecretCalls(tt.Tree.Root, func(c *tmplparse.CommandNode) {
			if bad != "" {
				return
			}
			if len(c.Args) != 2 {
				bad = c.String()
				return
			}
			if _, ok := c.Args[1].(*tmplparse.StringNode); !ok {
				bad = c.String()
			}
		})
	}
	if bad != "" {
		return &FieldError{Field: name, Message: fmt.Sprintf(`template: {{%s}}: secret takes one quoted name, such as {{secret "api-token"}}`, bad)}
	}
	return nil
}

// walkSecretCalls calls fn for every command under node that calls the
// secret function. A bare "secret" used as a value (not a call) is
// reported as a command too, with no argument.
func walkSecretCalls(node tmplparse.Node, fn func(*tmplparse.CommandNode)) {
	switch n := node.(type) {
	case *tmplparse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkSecretCalls(c, fn)
		}
	case *tmplparse.ActionNode:
		walkSecretCalls(n.Pipe, fn)
	case *tmplparse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkSecretCalls(c, fn)
		}
	case *tmplparse.CommandNode:
		for i, a := range n.Args {
			if id, ok := a.(*tmplparse.IdentifierNode); ok && id.Ident == secretFunc {
				if i == 0 {
					fn(n)
				} else {
					// secret as an argument of another function: a value,
					// not a call with a name.
					fn(&tmplparse.CommandNode{NodeType: tmplparse.NodeCommand, Pos: n.Pos, Args: []tmplparse.Node{id}})
				}
				continue
			}
			walkSecretCalls(a, fn)
		}
	case *tmplparse.IfNode:
		walkSecretCalls(n.Pipe, fn)
		walkSecretCalls(n.List, fn)
		walkSecretCalls(n.ElseList, fn)
	case *tmplparse.WithNode:
		walkSecretCalls(n.Pipe, fn)
		walkSecretCalls(n.List, fn)
		walkSecretCalls(n.ElseList, fn)
	case *tmplparse.RangeNode:
		walkSecretCalls(n.Pipe, fn)
		walkSecretCalls(n.List, fn)
		walkSecretCalls(n.ElseList, fn)
	}
}

// Mask is what Redact writes in place of a secret's value.
const Mask = "****"

// Redact returns text with every occurrence of each of values, and of
// their URL-escaped forms, replaced by Mask, longest value first. When
// truncated is set, text was cut short, and an end of text that is the
// start of one of values is masked too. Empty values are ignored.
//
// It is a best effort for output a job echoes: a value the job transforms
// (encodes in base64, splits across lines, prints a character at a time)
// is not recognised.
func Redact(text string, values []string, truncated bool) string {
	forms := redactForms(values)
	if len(forms) == 0 {
		return text
	}
	for _, f := range forms {
		text = strings.ReplaceAll(text, f, Mask)
	}
	if truncated {
		for _, f := range forms {
			for n := len(f) - 1; n > 0; n-- {
				if strings.HasSuffix(text, f[:n]) {
					return text[:len(text)-n] + Mask
				}
			}
		}
	}
	return text
}

// redactForms returns the non-empty values with their URL-escaped forms,
// longest first, so that a value that contains another is masked whole.
func redactForms(values []string) []string {
	var forms []string
	for _, v := range values {
		if v == "" {
			continue
		}
		forms = append(forms, v, url.QueryEscape(v), url.PathEscape(v))
	}
	slices.SortFunc(forms, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(forms)
}
