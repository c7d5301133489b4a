package shelljob

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/chime-scheduler/chime/jobs"
)

// AnyProgram is the allow-list pattern that allows every program.
const AnyProgram = "*"

// AllowList says which programs shell jobs may run. Its zero value (and a
// nil *AllowList) allows none; NewAllowList builds one from patterns.
type AllowList struct {
	patterns []string
	any      bool
}

// NewAllowList returns the allow-list of patterns. Each is an absolute
// path (/usr/local/bin/backup) or a glob over absolute paths in the syntax
// of path/filepath.Match (/opt/jobs/bin/*; "*" does not cross a "/"), or
// AnyProgram ("*") alone, which allows every program. It refuses an empty
// list, a relative pattern and a malformed glob, naming the pattern.
func NewAllowList(patterns []string) (*AllowList, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("shelljob: the allow-list is empty: list the programs shell jobs may run, or %q for any", AnyProgram)
	}
	a := &AllowList{}
	for i, p := range patterns {
		switch {
		case p == AnyProgram:
			a.any = true
			continue
		case !filepath.IsAbs(p):
			return nil, fmt.Errorf("shelljob: allow-list entry %d (%q) is not an absolute path or glob", i, p)
		}
		if _, err := filepath.Match(p, "/"); err != nil {
			return nil, fmt.Errorf("shelljob: allow-list entry %d (%q): %w", i, p, err)
		}
		a.patterns = append(a.patterns, p)
	}
	return a, nil
}

// AllowsAny reports whether a allows every program.
func (a *AllowList) AllowsAny() bool { return a != nil && a.any }

// Check reports whether a allows the program spec runs, as a
// *jobs.FieldError naming the field when it does not. Unless a allows any
// program, the program must be given as it runs: argv[0] an absolute,
// clean path with no template, matched against the patterns; a script
// ("shell") runs ShellPath, so it is allowed only when ShellPath is.
func (a *AllowList) Check(spec Spec) error {
	if a.AllowsAny() {
		return nil
	}
	field, prog := "shell.argv[0]", ""
	switch {
	case spec.Shell != "":
		field, prog = "shell.shell", ShellPath
	case len(spec.Argv) > 0:
		prog = spec.Argv[0]
	default:
		return nil // Validate reports the missing program
	}
	switch {
	case strings.Contains(prog, "{{"):
		return &jobs.FieldError{Field: field, Message: "must be the program's absolute path, not a template, on a server with an allow-list of commands"}
	case !filepath.IsAbs(prog) || filepath.Clean(prog) != prog:
		return &jobs.FieldError{Field: field, Message: strconv.Quote(prog) + " is not a clean absolute path; this server's allow-list of commands matches programs by their absolute path"}
	}
	if a != nil {
		for _, p := range a.patterns {
			if ok, _ := filepath.Match(p, prog); ok {
				return nil
			}
		}
	}
	msg := strconv.Quote(prog) + " is not in this server's allow-list of commands (shell_allow)"
	if spec.Shell != "" {
		msg = "scripts run " + ShellPath + ", which is not in this server's allow-list of commands (shell_allow); run a listed program through argv"
	}
	return &jobs.FieldError{Field: field, Message: msg}
}
