package httpjob_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/httpjob"
)

func ExampleRunner_Run() {
	// A hook that greets whoever calls it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s from %s: %s\n", r.Method, r.URL.Path, r.Header.Get("X-Node"), body)
	}))
	defer srv.Close()

	spec := httpjob.Spec{
		Method:  http.MethodPost,
		URL:     srv.URL + "/hooks/{{.JobName}}",
		Headers: map[string]string{"X-Node": "{{.NodeID}}"},
		Body:    `{"region": {{json .Params.region}}}`,
	}
	vars := jobs.Vars{JobName: "nightly", NodeID: "node-a", Params: map[string]any{"region": "eu-west"}}

	var r httpjob.Runner
	res, err := r.Run(context.Background(), spec, vars, os.Stdout)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("status:", res.Status, "truncated:", res.Truncated)
	// Output:
	// HTTP/1.1 200 OK
	// POST /hooks/nightly from node-a: {"region": "eu-west"}
	// status: 200 truncated: false
}
