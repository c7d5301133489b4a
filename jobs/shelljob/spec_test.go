package shelljob_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/shelljob"
)

// wantFieldError asserts err is a *jobs.FieldError naming field with the
// message want ("" to skip the message).
func wantFieldError(t *testing.T, err error, field, want string) {
	t.Helper()
	var fe *jobs.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T), want a *jobs.FieldError for %s", err, err, field)
	}
	if fe.Field != field {
		t.Fatalf("error %q names field %q, want %q", err, fe.Field, field)
	}
	if want != "" && err.Error() != want {
		t.Fatalf("error:\n got %s\nwant %s", err, want)
	}
}

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		spec  shelljob.Spec
		field string // "" when valid
		msg   string
	}{
		{"argv", shelljob.Spec{Argv: []string{"true"}}, "", ""},
		{"shell", shelljob.Spec{Shell: "true | cat"}, "", ""},
		{"everything", shelljob.Spec{
			Argv:       []string{"/bin/echo", "{{.JobName}}", ""},
			Env:        map[string]string{"A": "{{.Params.a}}", "CHIME_SERVER": "x"},
			InheritEnv: []string{"HOME", "LANG"},
			Dir:        "/tmp",
			Timeout:    time.Minute,
		}, "", ""},
		{"shell is not a template", shelljob.Spec{Shell: "echo {{"}, "", ""},
		{"neither", shelljob.Spec{}, "shell.argv", "shell.argv: required (or set shell to run a /bin/sh script)"},
		{"both", shelljob.Spec{Argv: []string{"true"}, Shell: "true"}, "shell.shell",
			"shell.shell: cannot be set together with argv; set one"},
		{"empty program", shelljob.Spec{Argv: []string{"", "x"}}, "shell.argv[0]",
			"shell.argv[0]: empty; it must name the program to run"},
		{"argv template", shelljob.Spec{Argv: []string{"echo", "{{.JobName"}}, "shell.argv[1]",
			"shell.argv[1]: template: 1: unclosed action"},
		{"env name with =", shelljob.Spec{Shell: "true", Env: map[string]string{"A=B": "1"}}, "shell.env.A=B",
			"shell.env.A=B: invalid variable name"},
		{"empty env name", shelljob.Spec{Shell: "true", Env: map[string]string{"": "1"}}, "shell.env.", ""},
		{"reserved env name", shelljob.Spec{Shell: "true", Env: map[string]string{"CHIME_JOB_NAME": "x"}}, "shell.env.CHIME_JOB_NAME",
			"shell.env.CHIME_JOB_NAME: reserved: the runner sets it to the firing's value"},
		{"env template", shelljob.Spec{Shell: "true", Env: map[string]string{"A": "{{nope}}"}}, "shell.env.A", ""},
		{"relative dir", shelljob.Spec{Shell: "true", Dir: "work"}, "shell.dir",
			`shell.dir: must be an absolute path, got "work"`},
		{"negative timeout", shelljob.Spec{Shell: "true", Timeout: -1}, "shell.timeout",
			"shell.timeout: must not be negative"},
		{"inherited name with =", shelljob.Spec{Shell: "true", InheritEnv: []string{"HOME", "A=B"}}, "shell.inherit_env[1]",
			`shell.inherit_env[1]: invalid variable name "A=B"`},
		{"empty inherited name", shelljob.Spec{Shell: "true", InheritEnv: []string{""}}, "shell.inherit_env[0]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.spec.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			wantFieldError(t, err, tt.field, tt.msg)
		})
	}
}

func TestSpecJSON(t *testing.T) {
	t.Parallel()
	const in = `{"argv":["backup","{{.JobName}}"],"env":{"A":"1"},"inherit_env":["HOME","LANG"],"dir":"/srv","timeout":"10m"}`
	var got shelljob.Spec
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	want := shelljob.Spec{
		Argv:       []string{"backup", "{{.JobName}}"},
		Env:        map[string]string{"A": "1"},
		InheritEnv: []string{"HOME", "LANG"},
		Dir:        "/srv",
		Timeout:    10 * time.Minute,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n %+v\nwant\n %+v", got, want)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != in {
		t.Errorf("encoded\n %s\nwant\n %s", b, in)
	}
	b, err = json.Marshal(shelljob.Spec{Shell: "date"})
	if err != nil || string(b) != `{"shell":"date"}` {
		t.Errorf("minimal spec encodes as %s, %v; want only the script", b, err)
	}
}

func TestSpecJSONErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json, field, msg string
	}{
		{"unknown field", `{"shell":"date","cwd":"/"}`, "shell.cwd", "shell.cwd: unknown field"},
		{"argv as a string", `{"argv":"date -u"}`, "shell.argv", "shell.argv: got JSON string, want array"},
		{"bad duration", `{"shell":"date","timeout":"ten minutes"}`, "shell.timeout", ""},
		{"inherit_env true", `{"shell":"date","inherit_env":true}`, "shell.inherit_env",
			`shell.inherit_env: true (the whole environment) is no longer accepted: list the variables to pass by name, such as ["HOME", "LANG"]`},
		{"inherit_env a string", `{"shell":"date","inherit_env":"HOME"}`, "shell.inherit_env",
			`shell.inherit_env: must be a list of variable names, such as ["HOME", "LANG"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s shelljob.Spec
			wantFieldError(t, json.Unmarshal([]byte(tt.json), &s), tt.field, tt.msg)
		})
	}
}

func TestSpecJSONInheritEnvFalseIsNone(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"shell":"date","inherit_env":false}`, `{"shell":"date","inherit_env":null}`} {
		var got shelljob.Spec
		if err := json.Unmarshal([]byte(in), &got); err != nil || got.InheritEnv != nil {
			t.Errorf("Unmarshal(%s) = %+v, %v; want no inherited variables", in, got, err)
		}
	}
}

func TestAllowList(t *testing.T) {
	t.Parallel()
	allow, err := shelljob.NewAllowList([]string{"/usr/local/bin/backup", "/opt/jobs/*"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		spec  shelljob.Spec
		field string // "" when allowed
		msg   string
	}{
		{"listed path", shelljob.Spec{Argv: []string{"/usr/local/bin/backup", "{{.JobName}}"}}, "", ""},
		{"glob", shelljob.Spec{Argv: []string{"/opt/jobs/report"}}, "", ""},
		{"glob does not cross a slash", shelljob.Spec{Argv: []string{"/opt/jobs/sub/report"}}, "shell.argv[0]",
			`shell.argv[0]: "/opt/jobs/sub/report" is not in this server's allow-list of commands (shell_allow)`},
		{"dot-dot", shelljob.Spec{Argv: []string{"/opt/jobs/../../bin/sh"}}, "shell.argv[0]",
			`shell.argv[0]: "/opt/jobs/../../bin/sh" is not a clean absolute path; this server's allow-list of commands matches programs by their absolute path`},
		{"looked up in PATH", shelljob.Spec{Argv: []string{"backup"}}, "shell.argv[0]", ""},
		{"template", shelljob.Spec{Argv: []string{"{{.Params.bin}}"}}, "shell.argv[0]",
			"shell.argv[0]: must be the program's absolute path, not a template, on a server with an allow-list of commands"},
		{"not listed", shelljob.Spec{Argv: []string{"/bin/rm", "-rf", "/"}}, "shell.argv[0]", ""},
		{"script without /bin/sh listed", shelljob.Spec{Shell: "backup | gzip"}, "shell.shell",
			"shell.shell: scripts run /bin/sh, which is not in this server's allow-list of commands (shell_allow); run a listed program through argv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := allow.Check(tt.spec)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			wantFieldError(t, err, tt.field, tt.msg)
		})
	}

	anything, err := shelljob.NewAllowList([]string{shelljob.AnyProgram})
	if err != nil {
		t.Fatal(err)
	}
	if err := anything.Check(shelljob.Spec{Shell: "rm -rf /tmp/x"}); err != nil {
		t.Errorf("allow-list %q refused a script: %v", shelljob.AnyProgram, err)
	}
	if err := (*shelljob.AllowList)(nil).Check(shelljob.Spec{Argv: []string{"/bin/true"}}); err == nil {
		t.Error("a nil allow-list allowed a program")
	}
}

func TestNewAllowListErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		patterns []string
		want     string
	}{
		{"empty", nil, `shelljob: the allow-list is empty: list the programs shell jobs may run, or "*" for any`},
		{"relative", []string{"/bin/true", "bin/backup"}, `shelljob: allow-list entry 1 ("bin/backup") is not an absolute path or glob`},
		{"bad glob", []string{"/opt/[x"}, `shelljob: allow-list entry 0 ("/opt/[x"): syntax error in pattern`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := shelljob.NewAllowList(tt.patterns); err == nil || err.Error() != tt.want {
				t.Errorf("NewAllowList(%q) = %v, want %s", tt.patterns, err, tt.want)
			}
		})
	}
}
