package shelljob

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/jobs"
)

// ShellPath is the shell that runs a Spec's Shell script, as
// ShellPath -c script.
const ShellPath = "/bin/sh"

// Spec is the command a "shell" job runs each time it fires. Its JSON form
// is described in the package documentation.
type Spec struct {
	// Argv is the program and its arguments, run directly with no shell in
	// between; each element is a template. A program name without a slash
	// is looked up in the server's PATH. Exactly one of Argv and Shell is
	// required.
	Argv []string `json:"argv,omitempty"`
	// Shell is a script run as /bin/sh -c Shell, for when a pipeline or a
	// redirection is wanted. It is not a template: the script reads the
	// firing's variables from its environment (CHIME_JOB_NAME, …), which
	// cannot inject shell syntax.
	Shell string `json:"shell,omitempty"`
	// Env sets environment variables; each value is a template. The
	// CHIME_ variables the runner sets cannot be overridden.
	Env map[string]string `json:"env,omitempty"`
	// InheritEnv names the variables of the server's environment passed
	// on to the command, under Env and the CHIME_ variables; a name the
	// server's environment lacks is left out. Empty by default, when the
	// command sees only the server's PATH, Env and the CHIME_ variables.
	// The server's environment may hold its own secrets: name only what
	// the command needs. (The boolean form of earlier versions, which
	// passed the whole environment, is refused.)
	InheritEnv []string `json:"inherit_env,omitempty"`
	// Dir is the absolute path of the working directory. Defaults to the
	// server's.
	Dir string `json:"dir,omitempty"`
	// Timeout stops the command after this long; in JSON a Go duration
	// string such as "10m". Zero for no limit of its own: the caller's
	// context still applies.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// wireSpec is Spec's JSON form: Spec with its timeout as a duration string.
type wireSpec struct {
	Argv       []string          `json:"argv,omitempty"`
	Shell      string            `json:"shell,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	InheritEnv json.RawMessage   `json:"inherit_env,omitempty"`
	Dir        string            `json:"dir,omitempty"`
	Timeout    string            `json:"timeout,omitempty"`
}

// MarshalJSON encodes s with its timeout as a duration string.
func (s Spec) MarshalJSON() ([]byte, error) {
	w := wireSpec{
		Argv:    s.Argv,
		Shell:   s.Shell,
		Env:     s.Env,
		Dir:     s.Dir,
		Timeout: jobs.FormatDuration(s.Timeout),
	}
	if len(s.InheritEnv) > 0 {
		var err error
		if w.InheritEnv, err = json.Marshal(s.InheritEnv); err != nil {
			return nil, err
		}
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes s, refusing unknown fields. Errors are
// *jobs.FieldError values. It does not validate: call Validate.
func (s *Spec) UnmarshalJSON(data []byte) error {
	var w wireSpec
	if err := jobs.DecodeJSON(data, "shell", &w); err != nil {
		return err
	}
	timeout, err := jobs.ParseDuration("shell.timeout", w.Timeout)
	if err != nil {
		return err
	}
	inherit, err := parseInheritEnv(w.InheritEnv)
	if err != nil {
		return err
	}
	*s = Spec{
		Argv:       w.Argv,
		Shell:      w.Shell,
		Env:        w.Env,
		InheritEnv: inherit,
		Dir:        w.Dir,
		Timeout:    timeout,
	}
	return nil
}

// parseInheritEnv decodes "inherit_env": a list of variable names. null
// and false, which earlier versions wrote for "none", mean none; true,
// which passed the whole environment, is refused with the new form.
func parseInheritEnv(raw json.RawMessage) ([]string, error) {
	switch strings.TrimSpace(string(raw)) {
	case "", "null", "false":
		return nil, nil
	case "true":
		return nil, &jobs.FieldError{Field: "shell.inherit_env",
			Message: `true (the whole environment) is no longer accepted: list the variables to pass by name, such as ["HOME", "LANG"]`}
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return nil, &jobs.FieldError{Field: "shell.inherit_env",
			Message: `must be a list of variable names, such as ["HOME", "LANG"]`, Err: err}
	}
	return names, nil
}

// Validate checks s without running anything: exactly one of Argv and
// Shell is set, the program is named, templates parse, environment names
// are well formed and not reserved, Dir is absolute and the timeout is not
// negative. Whether the program and the directory exist is found out when
// the job runs. It returns the first problem as a *jobs.FieldError.
func (s *Spec) Validate() error {
	switch {
	case len(s.Argv) > 0 && s.Shell != "":
		return &jobs.FieldError{Field: "shell.shell", Message: "cannot be set together with argv; set one"}
	case len(s.Argv) == 0 && s.Shell == "":
		return &jobs.FieldError{Field: "shell.argv", Message: "required (or set shell to run a /bin/sh script)"}
	}
	for i, arg := range s.Argv {
		field := "shell.argv[" + strconv.Itoa(i) + "]"
		if i == 0 && arg == "" {
			return &jobs.FieldError{Field: field, Message: "empty; it must name the program to run"}
		}
		if err := jobs.CheckTemplate(field, arg); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Env)) {
		field := "shell.env." + name
		switch {
		case name == "" || strings.ContainsAny(name, "=\x00"):
			return &jobs.FieldError{Field: field, Message: "invalid variable name"}
		case reserved(name):
			return &jobs.FieldError{Field: field, Message: "reserved: the runner sets it to the firing's value"}
		}
		if err := jobs.CheckTemplate(field, s.Env[name]); err != nil {
			return err
		}
	}
	for i, name := range s.InheritEnv {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return &jobs.FieldError{Field: "shell.inherit_env[" + strconv.Itoa(i) + "]", Message: "invalid variable name " + strconv.Quote(name)}
		}
	}
	if s.Dir != "" && !filepath.IsAbs(s.Dir) {
		return &jobs.FieldError{Field: "shell.dir", Message: "must be an absolute path, got " + strconv.Quote(s.Dir)}
	}
	if s.Timeout < 0 {
		return &jobs.FieldError{Field: "shell.timeout", Message: "must not be negative"}
	}
	return nil
}

// command expands s's templates over v and returns the argv to run and
// its environment.
func (s Spec) command(v jobs.Vars) (argv, env []string, err error) {
	if s.Shell != "" {
		argv = []string{ShellPath, "-c", s.Shell}
	} else {
		argv = make([]string, len(s.Argv))
		for i, text := range s.Argv {
			if argv[i], err = jobs.Expand("shell.argv["+strconv.Itoa(i)+"]", text, v); err != nil {
				return nil, nil, err
			}
		}
	}
	// Later entries win: exec.Cmd keeps the last value of a name.
	if path, ok := os.LookupEnv("PATH"); ok {
		env = append(env, "PATH="+path)
	}
	for _, name := range s.InheritEnv {
		if value, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+value)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Env)) {
		value, err := jobs.Expand("shell.env."+name, s.Env[name], v)
		if err != nil {
			return nil, nil, err
		}
		env = append(env, name+"="+value)
	}
	fire, err := fireEnv(v)
	if err != nil {
		return nil, nil, err
	}
	return argv, append(env, fire...), nil
}

// The environment variables that carry a firing's Vars.
const (
	envJobGroup      = "CHIME_JOB_GROUP"
	envJobName       = "CHIME_JOB_NAME"
	envTriggerGroup  = "CHIME_TRIGGER_GROUP"
	envTriggerName   = "CHIME_TRIGGER_NAME"
	envExecutionID   = "CHIME_EXECUTION_ID"
	envNodeID        = "CHIME_NODE_ID"
	envScheduledTime = "CHIME_SCHEDULED_TIME"
	envFireTime      = "CHIME_FIRE_TIME"
	envAttempt       = "CHIME_ATTEMPT"
	envParams        = "CHIME_PARAMS"
	envShardIndex    = "CHIME_SHARD_INDEX"
	envShardTotal    = "CHIME_SHARD_TOTAL"
)

// reserved reports whether name is one of the variables fireEnv sets.
func reserved(name string) bool {
	switch name {
	case envJobGroup, envJobName, envTriggerGroup, envTriggerName, envExecutionID,
		envNodeID, envScheduledTime, envFireTime, envAttempt, envParams, envShardIndex, envShardTotal:
		return true
	}
	return false
}

// fireEnv returns v as environment variables.
func fireEnv(v jobs.Vars) ([]string, error) {
	params := []byte("{}")
	if len(v.Params) > 0 {
		var err error
		if params, err = json.Marshal(v.Params); err != nil {
			return nil, &jobs.FieldError{Field: "params", Message: "cannot be encoded as JSON: " + err.Error(), Err: err}
		}
	}
	env := []string{
		envJobGroup + "=" + v.JobGroup,
		envJobName + "=" + v.JobName,
		envTriggerGroup + "=" + v.TriggerGroup,
		envTriggerName + "=" + v.TriggerName,
		envExecutionID + "=" + v.ExecutionID,
		envNodeID + "=" + v.NodeID,
		envScheduledTime + "=" + formatTime(v.ScheduledTime),
		envFireTime + "=" + formatTime(v.FireTime),
		envAttempt + "=" + strconv.Itoa(v.Attempt),
		envParams + "=" + string(params),
	}
	if v.ShardTotal > 0 {
		env = append(env, envShardIndex+"="+strconv.Itoa(v.ShardIndex), envShardTotal+"="+strconv.Itoa(v.ShardTotal))
	}
	return env, nil
}

// formatTime formats t as RFC 3339 with as many fractional digits as it
// needs; the zero time is "".
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339Nano)
}
