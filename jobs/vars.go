package jobs

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"
	tmplparse "text/template/parse"
	"time"
)

// Vars are the facts of one firing that a job's templates may use. The
// server fills them in from the execution it runs.
type Vars struct {
	// JobGroup and JobName are the key of the job that fired.
	JobGroup, JobName string
	// TriggerGroup and TriggerName are the key of the trigger that fired
	// it; empty when the job was run by hand.
	TriggerGroup, TriggerName string
	// ExecutionID identifies this execution in the server's history.
	ExecutionID string
	// NodeID identifies the cluster node running the execution.
	NodeID string
	// ScheduledTime is when the trigger was due.
	ScheduledTime time.Time
	// FireTime is when the job actually fired; later than ScheduledTime by
	// the firing lag, or much later after a misfire or a recovery.
	FireTime time.Time
	// Attempt counts tries of this firing, starting at 1; a retry has 2 or
	// more.
	Attempt int
	// Params are the job's parameters (its data map overlaid with the
	// trigger's), as decoded from JSON.
	Params map[string]any
	// ShardIndex and ShardTotal place an item of a sharded firing among
	// its items: index from 0, of total. ShardTotal is 0 for a job that
	// is not sharded.
	ShardIndex, ShardTotal int
	// Secrets reads the secrets that {{secret "name"}} inserts. Nil makes
	// every {{secret}} fail with ErrNoSecrets.
	Secrets SecretLookup
}

// Expand expands text as a template over v (see the package documentation
// for the variables and functions). name is the spec field the text came
// from, such as "http.body"; errors are *FieldError values naming it. Text
// without "{{" is returned unchanged.
func Expand(name, text string, v Vars) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := parse(name, text)
	if err != nil {
		return "", err
	}
	b := &boundedBuilder{max: MaxExpansion}
	if err := t.Funcs(secretFuncs(v)).Execute(b, v); err != nil {
		return "", expandError(name, err)
	}
	return b.String(), nil
}

// expandError turns an error of a template's execution into a FieldError.
func expandError(name string, err error) *FieldError {
	if errors.Is(err, errTooLong) {
		return &FieldError{Field: name, Message: fmt.Sprintf("template: expands to more than %d bytes", MaxExpansion), Err: err}
	}
	if se, ok := errors.AsType[*SecretError](err); ok {
		return &FieldError{Field: name, Message: se.Error(), Err: se}
	}
	return templateError(name, err)
}

// MaxExpansion bounds the text one template may expand to, so that a
// template cannot fill a node's memory.
const MaxExpansion = 1 << 20

// errTooLong stops a template whose expansion passes MaxExpansion.
var errTooLong = errors.New("template expansion too long")

// boundedBuilder is a strings.Builder that refuses to grow past max bytes.
type boundedBuilder struct {
	strings.Builder
	max int
}

func (b *boundedBuilder) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, errTooLong
	}
	return b.Builder.Write(p)
}

// CheckTemplate reports whether text parses as a template, as Expand would
// parse it, without expanding it. Spec validation uses it, so that a
// template with a syntax error is refused when the job is saved rather than
// when it fires. Errors are *FieldError values naming name.
func CheckTemplate(name, text string) error {
	if !strings.Contains(text, "{{") {
		return nil
	}
	_, err := parse(name, text)
	return err
}

func parse(name, text string) (*template.Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs()).Parse(text)
	if err != nil {
		return nil, templateError(name, err)
	}
	if err := CheckBounded(name, t); err != nil {
		return nil, err
	}
	if err := checkSecretCalls(name, t); err != nil {
		return nil, err
	}
	return t, nil
}

// CheckBounded refuses a parsed template whose expansion could run
// unbounded: one with a loop ({{range}}, which also ranges over integers)
// or a call of another template ({{template}}, {{block}}, {{define}}),
// which can recurse. Without them a template's work is bounded by its
// length and by the size of the data it is given, so a firing's templates
// expand in a time its timeout cannot notice. Lists are rendered with the
// json function instead. Errors are *FieldError values naming name.
func CheckBounded(name string, t *template.Template) error {
	var defined []string
	for _, tt := range t.Templates() {
		if tt.Name() != name {
			defined = append(defined, tt.Name())
		}
	}
	if len(defined) > 0 {
		return &FieldError{Field: name, Message: fmt.Sprintf("template: {{define %q}} is not allowed: job templates cannot call templates", slices.Min(defined))}
	}
	if t.Tree == nil {
		return nil
	}
	if what := unboundedNode(t.Tree.Root); what != "" {
		return &FieldError{Field: name, Message: "template: " + what + " is not allowed: job templates have no loops or template calls, so that expanding one is always quick; render lists with json"}
	}
	return nil
}

// unboundedNode returns the first {{range}} or {{template}} action under
// node, as written, or "".
func unboundedNode(node tmplparse.Node) string {
	switch n := node.(type) {
	case *tmplparse.ListNode:
		if n == nil {
			return ""
		}
		for _, c := range n.Nodes {
			if what := unboundedNode(c); what != "" {
				return what
			}
		}
	case *tmplparse.RangeNode:
		return "{{range}}"
	case *tmplparse.TemplateNode:
		return fmt.Sprintf("{{template %q}}", n.Name)
	case *tmplparse.IfNode:
		return cmp.Or(unboundedNode(n.List), unboundedNode(n.ElseList))
	case *tmplparse.WithNode:
		return cmp.Or(unboundedNode(n.List), unboundedNode(n.ElseList))
	}
	return ""
}

// funcs are the functions templates may call besides text/template's
// built-ins.
func funcs() template.FuncMap {
	return template.FuncMap{
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
		// raw returns its argument unchanged; in a URL (ExpandURL) it is
		// inserted without escaping.
		"raw": func(s string) urlText { return urlText(s) },
		// secret is replaced by secretFuncs before a template runs; this
		// one only lets templates that call it parse.
		secretFunc: func(string) (string, error) { return "", ErrNoSecrets },
	}
}

// templateError turns an error from text/template into a FieldError. The
// template's messages start with "template: <name>:", which the field
// already says.
func templateError(name string, err error) *FieldError {
	msg := strings.TrimPrefix(err.Error(), "template: "+name+":")
	return &FieldError{Field: name, Message: "template: " + msg, Err: err}
}
