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
			InheritEnv: true,
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
	const in = `{"argv":["backup","{{.JobName}}"],"env":{"A":"1"},"inherit_env":true,"dir":"/srv","timeout":"10m"}`
	var got shelljob.Spec
	if err := json.Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	want := shelljob.Spec{
		Argv:       []string{"backup", "{{.JobName}}"},
		Env:        map[string]string{"A": "1"},
		InheritEnv: true,
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s shelljob.Spec
			wantFieldError(t, json.Unmarshal([]byte(tt.json), &s), tt.field, tt.msg)
		})
	}
}
