// Package names holds the one rule for the names the server keeps and
// serves: a job's group and name, a trigger's and a calendar's name, an
// executor group, handler or label, an execution ID. The stores' part of
// it is the library's (chime.CheckName); the server adds its own.
package names

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/chime-scheduler/chime"
)

// Problem returns why v cannot be such a name, or "" when it can. A name
// is refused when it is empty, when no store can keep it (chime.CheckName:
// not UTF-8, or longer than chime.MaxKeyLength characters), when it holds
// a control character, which logs and terminals show badly, or when it
// starts or ends with a space: MySQL's padding collations once made "a"
// and "a " one key, so no two names differ only by surrounding spaces.
func Problem(v string) string {
	if v == "" {
		return "is required"
	}
	if ve, ok := errors.AsType[*chime.ValidationError](chime.CheckName("", v)); ok {
		return ve.Reason
	}
	switch {
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return fmt.Sprintf("%q contains a control character", v)
	case strings.TrimSpace(v) != v:
		return fmt.Sprintf("%q starts or ends with a space", v)
	}
	return ""
}
