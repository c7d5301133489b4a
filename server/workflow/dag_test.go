package workflow

import (
	"errors"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	tasks := []string{"extract", "load", "index", "report"}
	tests := []struct {
		name      string
		g         Graph
		field     string
		inMessage string
	}{
		{name: "no tasks", g: Graph{}, field: "tasks"},
		{name: "bad task name", g: Graph{Tasks: []string{"ok", "has space"}}, field: "tasks[1].name"},
		{name: "duplicate task", g: Graph{Tasks: []string{"a", "b", "a"}}, field: "tasks[2].name", inMessage: "tasks[0]"},
		{name: "edge from a missing task", g: Graph{Tasks: tasks, Edges: []Edge{{From: "extract", To: "load"}, {From: "nope", To: "load"}}}, field: "edges[1].from"},
		{name: "edge to a missing task", g: Graph{Tasks: tasks, Edges: []Edge{{From: "extract", To: "lode"}}}, field: "edges[0].to"},
		{name: "bad condition", g: Graph{Tasks: tasks, Edges: []Edge{{From: "extract", To: "load", On: "sometimes"}}}, field: "edges[0].on"},
		{name: "self loop", g: Graph{Tasks: tasks, Edges: []Edge{{From: "load", To: "load"}}}, field: "edges[0]", inMessage: "load -> load"},
		{name: "edge twice", g: Graph{Tasks: tasks, Edges: []Edge{{From: "extract", To: "load"}, {From: "extract", To: "load", On: api.OnAlways}}}, field: "edges[1]"},
		{
			name: "cycle",
			g: Graph{Tasks: tasks, Edges: []Edge{
				{From: "extract", To: "load"}, {From: "load", To: "index"}, {From: "index", To: "report"}, {From: "report", To: "load"},
			}},
			field: "edges[3]", inMessage: "cycle: load -> index -> report -> load",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Validate(tt.g)
			var fe *InvalidError
			if !errors.As(err, &fe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Validate = %v, want an *InvalidError", err)
			}
			if fe.Field != tt.field || !strings.Contains(fe.Reason, tt.inMessage) {
				t.Errorf("Validate = %q (field %q), want field %q with %q", err, fe.Field, tt.field, tt.inMessage)
			}
		})
	}
	t.Run("diamond is valid", func(t *testing.T) {
		t.Parallel()
		g := Graph{Tasks: tasks, Edges: []Edge{
			{From: "extract", To: "load"}, {From: "extract", To: "index"}, {From: "load", To: "report"}, {From: "index", To: "report", On: api.OnAlways},
		}}
		if err := Validate(g); err != nil {
			t.Fatalf("Validate: %v", err)
		}
	})
}

func TestAdvance(t *testing.T) {
	t.Parallel()
	// a -> b (success) -> d ; a -> c (failure) ; b -> e (always); x alone.
	g := Graph{Tasks: []string{"a", "b", "c", "d", "e", "x"}, Edges: []Edge{
		{From: "a", To: "b"}, {From: "a", To: "c", On: api.OnFailure}, {From: "b", To: "d"}, {From: "b", To: "e", On: api.OnAlways},
	}}.normalized()
	tests := []struct {
		name      string
		states    map[string]TaskState
		want      map[string]TaskState
		wantReady []string
	}{
		{
			name:      "roots become ready",
			states:    map[string]TaskState{"a": TaskPending, "b": TaskPending, "c": TaskPending, "d": TaskPending, "e": TaskPending, "x": TaskPending},
			want:      map[string]TaskState{"a": TaskReady, "b": TaskPending, "c": TaskPending, "d": TaskPending, "e": TaskPending, "x": TaskReady},
			wantReady: []string{"a", "x"},
		},
		{
			name:      "success runs the success edge, skips the failure edge",
			states:    map[string]TaskState{"a": TaskSucceeded, "b": TaskPending, "c": TaskPending, "d": TaskPending, "e": TaskPending, "x": TaskRunning},
			want:      map[string]TaskState{"a": TaskSucceeded, "b": TaskReady, "c": TaskSkipped, "d": TaskPending, "e": TaskPending, "x": TaskRunning},
			wantReady: []string{"b"},
		},
		{
			name:      "failure stops the descendants and runs the failure edge",
			states:    map[string]TaskState{"a": TaskFailed, "b": TaskPending, "c": TaskPending, "d": TaskPending, "e": TaskPending, "x": TaskRunning},
			want:      map[string]TaskState{"a": TaskFailed, "b": TaskSkipped, "c": TaskReady, "d": TaskSkipped, "e": TaskSkipped, "x": TaskRunning},
			wantReady: []string{"c"},
		},
		{
			name:      "always runs after a failure",
			states:    map[string]TaskState{"a": TaskSucceeded, "b": TaskFailed, "c": TaskSkipped, "d": TaskPending, "e": TaskPending, "x": TaskSucceeded},
			want:      map[string]TaskState{"a": TaskSucceeded, "b": TaskFailed, "c": TaskSkipped, "d": TaskSkipped, "e": TaskReady, "x": TaskSucceeded},
			wantReady: []string{"e"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ready := g.advance(tt.states)
			if strings.Join(ready, ",") != strings.Join(tt.wantReady, ",") {
				t.Errorf("ready = %v, want %v", ready, tt.wantReady)
			}
			for task, want := range tt.want {
				if tt.states[task] != want {
					t.Errorf("task %s = %s, want %s", task, tt.states[task], want)
				}
			}
		})
	}
}
