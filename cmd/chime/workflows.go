package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// workflowFile is the YAML file of `chime workflows apply`: workflows in
// the API's form (api.Workflow), as `chime workflows get NAME -o yaml`
// writes one (a single workflow is accepted too).
type workflowFile struct {
	Workflows []api.Workflow `json:"workflows"`
}

// workflowOwned reports whether the jobs of group are a workflow's tasks
// (group workflow.NAME), which the server keeps in step with the
// workflow: chime export leaves them out and chime apply never prunes
// them.
func workflowOwned(group string) bool { return strings.HasPrefix(group, "workflow.") }

// newWorkflowsCmd is `chime workflows`.
func newWorkflowsCmd(cfg *clientConfig) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "workflows",
		Aliases: []string{"workflow", "wf"},
		Short:   "List, apply and run workflows (DAGs of tasks), and manage their instances",
	}
	cmd.AddCommand(
		newWorkflowsListCmd(cfg), newWorkflowsGetCmd(cfg), newWorkflowsApplyCmd(cfg), newWorkflowsDeleteCmd(cfg),
		newWorkflowsRunCmd(cfg), newWorkflowsInstancesCmd(cfg), newWorkflowsInstanceCmd(cfg),
	)
	for _, a := range []struct{ action, short string }{
		{apiclient.InstancePause, "Pause a running instance: no further task starts"},
		{apiclient.InstanceResume, "Resume a paused instance"},
		{apiclient.InstanceKill, "Kill an instance: tasks not started are cancelled, running ones killed"},
		{apiclient.InstanceRerun, "Re-run an ended instance from its failed tasks"},
	} {
		cmd.AddCommand(&cobra.Command{
			Use:   a.action + " INSTANCE_ID",
			Short: a.short + " (operator or admin)",
			Args:  cobra.ExactArgs(1),
			RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
				in, err := c.ChangeWorkflowInstance(ctx, args[0], a.action)
				if err != nil {
					return err
				}
				return writeInstance(cmd.OutOrStdout(), cfg.output, in)
			}),
		})
	}
	return cmd
}

func newWorkflowsListCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the workflows",
		Args:  cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			list, err := c.ListWorkflows(ctx)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, workflowFile{Workflows: list})
			}
			t := newTable(cmd.OutOrStdout(), "NAME", "TASKS", "EDGES", "VERSION", "UPDATED").ifEmpty("No workflows.")
			for _, wf := range list {
				t.row(wf.Name, strconv.Itoa(len(wf.Tasks)), strconv.Itoa(len(wf.Edges)), strconv.FormatInt(wf.Version, 10), formatTime(wf.Updated))
			}
			return t.flush()
		}),
	}
}

func newWorkflowsGetCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:     "get NAME",
		Short:   "Show a workflow; -o yaml writes a file `chime workflows apply` takes",
		Example: "  chime workflows get etl -o yaml > etl.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			wf, err := c.GetWorkflow(ctx, args[0])
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				wf.Version, wf.Updated = 0, nil
				return writeStructured(cmd.OutOrStdout(), cfg.output, workflowFile{Workflows: []api.Workflow{*wf}})
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Workflow %s (version %d)\n", wf.Name, wf.Version)
			t := newTable(w, "TASK", "TYPE", "AFTER")
			after := map[string][]string{}
			for _, e := range wf.Edges {
				on := e.On
				if on == "" {
					on = api.OnSuccess
				}
				after[e.To] = append(after[e.To], e.From+" ("+string(on)+")")
			}
			for _, task := range wf.Tasks {
				t.row(task.Name, task.Type, orDash(strings.Join(after[task.Name], ", ")))
			}
			return t.flush()
		}),
	}
}

func newWorkflowsApplyCmd(cfg *clientConfig) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Create or update the workflows of a YAML file (operator or admin)",
		Long: `Create or update the workflows of a YAML file, in the API's form:

  workflows:
    - name: etl
      tasks:
        - {name: extract, type: http, http: {method: POST, url: "https://etl.example.com/extract"}}
        - {name: load, type: http, http: {method: POST, url: "https://etl.example.com/load"}, retry: {max_attempts: 3}}
        - {name: report, type: http, http: {method: POST, url: "https://etl.example.com/report"}}
      edges:
        - {from: extract, to: load}
        - {from: load, to: report, on: always}

A workflow the server refuses (a cycle, an unknown task type, an edge to a
missing task) is reported with the field at fault, and nothing of it changes.`,
		Args: cobra.NoArgs,
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, _ []string) error {
			wfs, err := readWorkflowFile(cmd.InOrStdin(), file)
			if err != nil {
				return err
			}
			for i, wf := range wfs {
				saved, created, err := c.PutWorkflow(ctx, wf, 0)
				if err != nil {
					return fmt.Errorf("%s: workflows[%d] (%s): %w", file, i, wf.Name, err)
				}
				verb := "updated"
				if created {
					verb = "created"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "workflow %s %s (version %d)\n", saved.Name, verb, saved.Version)
			}
			return nil
		}),
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the YAML file; - for standard input (required)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// readWorkflowFile reads the workflows of a YAML file: a map with a
// workflows: list, or one workflow.
func readWorkflowFile(stdin io.Reader, name string) ([]api.Workflow, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, maxManifestBytes))
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	var f workflowFile
	if err := decodeYAML(data, &f); err != nil {
		var one api.Workflow
		if err1 := decodeYAML(data, &one); err1 != nil || one.Name == "" {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		f.Workflows = []api.Workflow{one}
	}
	if len(f.Workflows) == 0 {
		return nil, fmt.Errorf("%s: no workflows (want a YAML map with a workflows: list)", name)
	}
	return f.Workflows, nil
}

func newWorkflowsDeleteCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a workflow and its tasks' jobs; its instances stay (operator or admin)",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			if err := c.DeleteWorkflow(ctx, args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "workflow %s deleted\n", args[0])
			return err
		}),
	}
}

func newWorkflowsRunCmd(cfg *clientConfig) *cobra.Command {
	var params []string
	cmd := &cobra.Command{
		Use:     "run NAME",
		Short:   "Start an instance of a workflow now, with parameters its tasks see (operator or admin)",
		Example: "  chime workflows run etl --param day=2025-03-01",
		Args:    cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			values := map[string]any{}
			for _, p := range params {
				k, v, ok := strings.Cut(p, "=")
				if !ok || k == "" {
					return fmt.Errorf("--param %q: want KEY=VALUE", p)
				}
				values[k] = v
			}
			in, err := c.RunWorkflow(ctx, args[0], values)
			if err != nil {
				return err
			}
			return writeInstance(cmd.OutOrStdout(), cfg.output, in)
		}),
	}
	cmd.Flags().StringArrayVar(&params, "param", nil, "a parameter KEY=VALUE (repeatable); values are strings")
	return cmd
}

func newWorkflowsInstancesCmd(cfg *clientConfig) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "instances [NAME]",
		Short: "List the newest instances of a workflow, or of all",
		Args:  cobra.MaximumNArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			list, err := c.ListWorkflowInstances(ctx, name, limit)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, list)
			}
			t := newTable(cmd.OutOrStdout(), "ID", "WORKFLOW", "STATE", "CREATED", "FINISHED").ifEmpty("No instances.")
			for _, in := range list {
				t.row(in.ID, in.Workflow, in.State, formatTime(&in.Created), formatTime(in.Finished))
			}
			return t.flush()
		}),
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "how many, newest first (at most 500)")
	return cmd
}

func newWorkflowsInstanceCmd(cfg *clientConfig) *cobra.Command {
	return &cobra.Command{
		Use:   "instance INSTANCE_ID",
		Short: "Show an instance with the state of each task",
		Args:  cobra.ExactArgs(1),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			in, err := c.GetWorkflowInstance(ctx, args[0])
			if err != nil {
				return err
			}
			return writeInstance(cmd.OutOrStdout(), cfg.output, in)
		}),
	}
}

// writeInstance prints an instance in the format asked for: in a table,
// its tasks with their states.
func writeInstance(w io.Writer, format outputFormat, in *api.WorkflowInstance) error {
	if format != formatTable {
		return writeStructured(w, format, in)
	}
	fmt.Fprintf(w, "Instance %s of workflow %s: %s\n", in.ID, in.Workflow, in.State)
	t := newTable(w, "TASK", "STATE", "ATTEMPTS", "EXECUTION", "STARTED", "FINISHED", "ERROR")
	for _, task := range in.Tasks {
		t.row(task.Task, task.State, strconv.Itoa(task.Attempts), orDash(task.ExecutionID),
			formatTime(task.Started), formatTime(task.Finished), orDash(task.Error))
	}
	return t.flush()
}
