package ics

import (
	"fmt"
	"strings"
)

// lineIndex says on which line each property of the first VCALENDAR
// sits: its own and those of its direct children (VEVENT, VTIMEZONE…), in
// the order the decoder lists them.
type lineIndex struct {
	props    map[string][]int
	children []*component
}

// component is where one component's lines are.
type component struct {
	begin int
	props map[string][]int
}

// line returns the line of the first prop, or fallback.
func (c *component) line(prop string, fallback int) int { return c.lineN(prop, 0, fallback) }

// lineN returns the line of the i-th prop, or fallback.
func (c *component) lineN(prop string, i, fallback int) int {
	if c != nil && i < len(c.props[prop]) {
		return c.props[prop][i]
	}
	return fallback
}

// calendarProp returns the line of a VCALENDAR property, 0 if none.
func (x *lineIndex) calendarProp(prop string) int {
	if ls := x.props[prop]; len(ls) > 0 {
		return ls[0]
	}
	return 0
}

// scan checks the structure of an iCalendar text the way the decoder
// reads it (unfolded content lines of NAME;PARAM=VALUE:VALUE, BEGIN and
// END nested and matched, starting with BEGIN:VCALENDAR), so that the
// decoder only ever sees what it handles, and an error names the line.
// It stops at the end of the first VCALENDAR, as the decoder does.
func scan(text string) (*lineIndex, error) {
	idx := &lineIndex{props: make(map[string][]int)}
	type open struct {
		name string
		line int
	}
	var stack []open
	var child *component
	sawAny := false
	for ln := range logicalLines(text) {
		if ln.text == "" {
			continue
		}
		name, value, err := contentLine(ln.text)
		if err != nil {
			return nil, &Error{Line: ln.num, Msg: err.Error()}
		}
		if !sawAny {
			sawAny = true
			if name != "BEGIN" || !strings.EqualFold(value, "VCALENDAR") {
				return nil, &Error{Line: ln.num, Msg: "the file does not start with BEGIN:VCALENDAR: it is not an iCalendar file"}
			}
		}
		switch name {
		case "BEGIN":
			comp := strings.ToUpper(value)
			if comp == "" {
				return nil, &Error{Line: ln.num, Property: "BEGIN", Msg: "names no component"}
			}
			stack = append(stack, open{comp, ln.num})
			if len(stack) == 2 {
				child = &component{begin: ln.num, props: make(map[string][]int)}
				idx.children = append(idx.children, child)
			}
		case "END":
			if len(stack) == 0 {
				return nil, &Error{Line: ln.num, Property: "END", Msg: "closes nothing"}
			}
			top := stack[len(stack)-1]
			if !strings.EqualFold(value, top.name) {
				return nil, &Error{Line: ln.num, Property: "END",
					Msg: fmt.Sprintf("END:%s does not close BEGIN:%s of line %d", value, top.name, top.line)}
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return idx, nil
			}
		default:
			switch len(stack) {
			case 1:
				idx.props[name] = append(idx.props[name], ln.num)
			case 2:
				child.props[name] = append(child.props[name], ln.num)
			}
		}
	}
	if !sawAny {
		return nil, &Error{Msg: "the file is empty"}
	}
	top := stack[len(stack)-1]
	return nil, &Error{Line: top.line, Property: "BEGIN", Msg: fmt.Sprintf("BEGIN:%s is never closed (no END:%s)", top.name, top.name)}
}

// logicalLine is a content line unfolded, with the number of its first
// physical line.
type logicalLine struct {
	num  int
	text string
}

// logicalLines unfolds a text's lines (RFC 5545 3.1: a line starting with
// a space or a tab continues the one before). The pieces of a folded line
// are joined once, when it ends, so that unfolding stays linear in the
// text's length however many lines are folded into one.
func logicalLines(text string) func(yield func(logicalLine) bool) {
	return func(yield func(logicalLine) bool) {
		var (
			pieces []string // the current line and its continuations
			first  int      // the number of its first physical line
		)
		emit := func() bool {
			if pieces == nil {
				return true
			}
			ln := logicalLine{num: first, text: strings.Join(pieces, "")}
			pieces = pieces[:0]
			return yield(ln)
		}
		num := 0
		for line := range strings.SplitSeq(text, "\n") {
			num++
			line = strings.TrimSuffix(line, "\r")
			if len(pieces) > 0 && line != "" && (line[0] == ' ' || line[0] == '\t') {
				pieces = append(pieces, line[1:])
				continue
			}
			if len(pieces) > 0 && !emit() {
				return
			}
			pieces = append(pieces, line)
			first = num
		}
		if len(pieces) > 0 {
			emit()
		}
	}
}

// contentLine checks one unfolded content line, NAME *(;PARAM=VALUE
// *(,VALUE)) : VALUE, where a parameter value is quoted or free of quotes,
// and returns its upper-case name and its value.
func contentLine(s string) (name, value string, err error) {
	i := strings.IndexAny(s, ";:")
	switch {
	case i < 0:
		return "", "", fmt.Errorf("%q has no ':' between a property name and its value", clip(s))
	case i == 0:
		return "", "", fmt.Errorf("%q has no property name", clip(s))
	}
	name = strings.ToUpper(s[:i])
	if strings.IndexFunc(name, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') }) >= 0 {
		return "", "", fmt.Errorf("%q is not a property name (letters, digits and '-')", clip(s[:i]))
	}
	rest := s[i:]
	for strings.HasPrefix(rest, ";") {
		rest = rest[1:]
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return "", "", fmt.Errorf("%s: a parameter has no NAME=value form", name)
		}
		param := rest[:eq]
		rest = rest[eq+1:]
		for {
			if strings.HasPrefix(rest, `"`) {
				end := strings.IndexByte(rest[1:], '"')
				if end < 0 {
					return "", "", fmt.Errorf("%s: parameter %s: a quoted value is not closed", name, param)
				}
				rest = rest[end+2:]
			} else {
				end := strings.IndexAny(rest, `;,:"`)
				if end >= 0 && rest[end] == '"' {
					return "", "", fmt.Errorf("%s: parameter %s: a value has a '\"' inside", name, param)
				}
				if end < 0 {
					end = len(rest)
				}
				rest = rest[end:]
			}
			if !strings.HasPrefix(rest, ",") {
				break
			}
			rest = rest[1:]
		}
		if rest == "" || (rest[0] != ';' && rest[0] != ':') {
			return "", "", fmt.Errorf("%s: no ':' after the parameters, before the value", name)
		}
	}
	if !strings.HasPrefix(rest, ":") {
		return "", "", fmt.Errorf("%s: no ':' before the value", name)
	}
	return name, rest[1:], nil
}

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
