package cron

import (
	"math/bits"
	"strconv"
	"strings"
)

// fieldSpec describes the values one field accepts.
type fieldSpec struct {
	name     string   // name used in errors
	min, max int      // allowed values
	maxStep  int      // largest accepted step
	names    []string // symbolic names, names[i] stands for nameBase+i
	nameBase int
	wrap     bool // a range may wrap around (FRI-MON, 22-2)
}

var (
	monthNames = []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
	dayNames   = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
)

// Field indexes in Quartz order.
const (
	fieldSecond = iota
	fieldMinute
	fieldHour
	fieldDayOfMonth
	fieldMonth
	fieldDayOfWeek
	fieldYear
)

var fieldNames = [7]string{"second", "minute", "hour", "day-of-month", "month", "day-of-week", "year"}

var quartzSpecs = [7]fieldSpec{
	{name: "second", min: 0, max: 59, maxStep: 59, wrap: true},
	{name: "minute", min: 0, max: 59, maxStep: 59, wrap: true},
	{name: "hour", min: 0, max: 23, maxStep: 23, wrap: true},
	{name: "day-of-month", min: 1, max: 31, maxStep: 31, wrap: true},
	{name: "month", min: 1, max: 12, maxStep: 12, names: monthNames, nameBase: 1, wrap: true},
	{name: "day-of-week", min: 1, max: 7, maxStep: 7, names: dayNames, nameBase: 1, wrap: true},
	{name: "year", min: MinYear, max: MaxYear, maxStep: 1<<31 - 1},
}

// fieldError is a problem in one field; the caller adds the expression.
type fieldError struct {
	field  string
	value  string
	reason string
}

func (f *fieldError) toParseError(expr string) *ParseError {
	return &ParseError{Expr: expr, Field: f.field, Value: f.value, Reason: f.reason}
}

// valueSet collects the values of a field. Years need more than 64 bits.
type valueSet struct {
	words [4]uint64
	base  int
}

func (s *valueSet) add(v int) {
	i := v - s.base
	s.words[i/64] |= 1 << uint(i%64)
}

// low returns the first 64 bits, for fields whose values fit.
func (s *valueSet) low() uint64 { return s.words[0] }

// plainItem is one list element of the forms *, */s, v, v/s, a-b, a-b/s.
type plainItem struct {
	star     bool
	lo, hi   int
	hasRange bool
	step     int // 0 = no step
	named    bool
	loText   string
	hiText   string
}

// canonical renders the item in canonical form.
func (p plainItem) canonical() string {
	var b strings.Builder
	if p.star {
		b.WriteByte('*')
	} else {
		b.WriteString(p.loText)
		if p.hasRange {
			b.WriteByte('-')
			b.WriteString(p.hiText)
		}
	}
	if p.step > 0 {
		b.WriteByte('/')
		b.WriteString(strconv.Itoa(p.step))
	}
	return b.String()
}

// parseNumber parses a run of ASCII digits (leading zeros allowed). ok is
// false for anything else; big is true when the value does not fit the
// range we care about.
func parseNumber(s string) (v int, ok, big bool) {
	if s == "" {
		return 0, false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false, false
		}
		if v > (1<<31-1)/10 {
			big = true
			continue
		}
		v = v*10 + int(c-'0')
	}
	if v > 1<<31-1 {
		big = true
	}
	return v, true, big
}

// upperASCII upper-cases ASCII letters only.
func upperASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func rangeReason(spec *fieldSpec) string {
	return "value out of range " + strconv.Itoa(spec.min) + "-" + strconv.Itoa(spec.max)
}

// parseValue parses a single value: a number or, where the field has
// names, a three-letter name. text is upper-case.
func parseValue(spec *fieldSpec, text string) (v int, named bool, reason string) {
	if text == "" {
		return 0, false, "missing value"
	}
	if c := text[0]; c >= 'A' && c <= 'Z' {
		if spec.names == nil {
			return 0, false, "names are not allowed in this field"
		}
		for i, n := range spec.names {
			if n == text {
				return spec.nameBase + i, true, ""
			}
		}
		return 0, false, "unknown name " + strconv.Quote(text)
	}
	n, ok, big := parseNumber(text)
	if !ok {
		return 0, false, "invalid value " + strconv.Quote(text)
	}
	if big || n < spec.min || n > spec.max {
		return 0, false, rangeReason(spec)
	}
	return n, false, ""
}

// parsePlainItem parses *, */s, v, v/s, a-b and a-b/s.
func parsePlainItem(spec *fieldSpec, text string) (plainItem, string) {
	var p plainItem
	base, stepText, hasStep := strings.Cut(text, "/")
	if hasStep {
		if strings.Contains(stepText, "/") {
			return p, "more than one '/'"
		}
		if base == "" {
			return p, "'/' needs a start value or '*' before it"
		}
		n, ok, big := parseNumber(stepText)
		switch {
		case stepText == "":
			return p, "'/' must be followed by a step"
		case !ok:
			return p, "invalid step " + strconv.Quote(stepText)
		case n == 0:
			return p, "step must be at least 1"
		case big || n > spec.maxStep:
			return p, "step must be between 1 and " + strconv.Itoa(spec.maxStep)
		}
		p.step = n
	}
	if base == "*" {
		p.star = true
		p.lo, p.hi = spec.min, spec.max
		return p, ""
	}
	loText, hiText, isRange := strings.Cut(base, "-")
	lo, loNamed, reason := parseValue(spec, loText)
	if reason != "" {
		return p, reason
	}
	p.lo, p.hi, p.named = lo, spec.max, loNamed
	p.loText = canonicalValue(loNamed, lo, loText)
	if isRange {
		hi, hiNamed, reason := parseValue(spec, hiText)
		if reason != "" {
			return p, reason
		}
		if hiNamed != loNamed {
			return p, "a range must use names at both ends or numbers at both ends"
		}
		if hi < lo && !spec.wrap {
			return p, "range start is after its end"
		}
		p.hi, p.hasRange = hi, true
		p.hiText = canonicalValue(hiNamed, hi, hiText)
	} else if !hasStep {
		p.hi = lo
	}
	if p.named && hasStep {
		return p, "a step cannot follow a name"
	}
	return p, ""
}

func canonicalValue(named bool, v int, text string) string {
	if named {
		return text
	}
	return strconv.Itoa(v)
}

// expand adds the values of a plain item to set. A range whose end is
// before its start wraps around the field (FRI-MON is FRI,SAT,SUN,MON), and
// a step walks on across the wrap, as in Quartz.
func (p plainItem) expand(spec *fieldSpec, set *valueSet) {
	step := p.step
	if step == 0 {
		step = 1
	}
	size := spec.max - spec.min + 1
	hi := p.hi
	if hi < p.lo {
		hi += size
	}
	for v := p.lo; v <= hi; v += step {
		set.add((v-spec.min)%size + spec.min)
		if step > hi-v {
			break // also keeps v from overflowing with huge steps
		}
	}
}

// nextBit returns the smallest set bit >= v in set.
func nextBit(set uint64, v int) (int, bool) {
	if v >= 64 {
		return 0, false
	}
	if v < 0 {
		v = 0
	}
	m := set >> uint(v) << uint(v)
	if m == 0 {
		return 0, false
	}
	return bits.TrailingZeros64(m), true
}

// firstBit returns the smallest set bit of a non-empty set.
func firstBit(set uint64) int { return bits.TrailingZeros64(set) }
