//go:build unix

package shelljob_test

import (
	"context"
	"fmt"
	"os"

	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/shelljob"
)

func ExampleRunner_Run() {
	vars := jobs.Vars{JobName: "nightly", Attempt: 1, Params: map[string]any{"region": "eu-west"}}
	var r shelljob.Runner

	// Argv runs a program directly; its arguments are templates.
	spec := shelljob.Spec{Argv: []string{"echo", "backing up", "{{.Params.region}}"}}
	if _, err := r.Run(context.Background(), spec, vars, os.Stdout); err != nil {
		fmt.Println("error:", err)
	}

	// A shell script reads the firing from its environment.
	spec = shelljob.Spec{Shell: `echo "$CHIME_JOB_NAME, attempt $CHIME_ATTEMPT" >&2; exit 3`}
	res, err := r.Run(context.Background(), spec, vars, os.Stdout)
	fmt.Println("exit code:", res.ExitCode)
	fmt.Println(err)
	// Output:
	// backing up eu-west
	// nightly, attempt 1
	// exit code: 3
	// shelljob: command exited with status 3
}
