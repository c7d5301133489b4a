package httpapi

import (
	"context"

	"github.com/chime-scheduler/chime/api"
)

// The recording service's side of Workflows: fixed answers, every call
// recorded.

func (s *recordingService) ListWorkflows(context.Context) (*api.WorkflowList, error) {
	s.call("ListWorkflows", "")
	return &api.WorkflowList{Workflows: []api.Workflow{}}, nil
}

func (s *recordingService) GetWorkflow(_ context.Context, name string) (*api.Workflow, error) {
	s.call("GetWorkflow", "", name)
	return &api.Workflow{Name: name, Version: 1}, nil
}

func (s *recordingService) PutWorkflow(_ context.Context, actor string, wf api.Workflow, ifMatch int64) (*api.Workflow, bool, error) {
	s.call("PutWorkflow", actor, wf.Name, ifMatch)
	wf.Version = 1
	return &wf, true, nil
}

func (s *recordingService) CheckWorkflow(_ context.Context, actor string, wf api.Workflow) error {
	s.call("CheckWorkflow", actor, wf.Name)
	return nil
}

func (s *recordingService) DeleteWorkflow(_ context.Context, actor, name string) error {
	s.call("DeleteWorkflow", actor, name)
	return nil
}

func (s *recordingService) RunWorkflow(_ context.Context, actor, name string, req api.WorkflowRunRequest) (*api.WorkflowInstance, error) {
	s.call("RunWorkflow", actor, name, req.Params)
	return &api.WorkflowInstance{ID: "i1", Workflow: name, State: "running", Tasks: []api.WorkflowTaskRun{}}, nil
}

func (s *recordingService) ListWorkflowInstances(_ context.Context, name string, limit int) (*api.WorkflowInstanceList, error) {
	s.call("ListWorkflowInstances", "", name, limit)
	return &api.WorkflowInstanceList{Instances: []api.WorkflowInstance{}}, nil
}

func (s *recordingService) GetWorkflowInstance(_ context.Context, id string) (*api.WorkflowInstance, error) {
	s.call("GetWorkflowInstance", "", id)
	return &api.WorkflowInstance{ID: id, Workflow: "etl", State: "running", Tasks: []api.WorkflowTaskRun{}}, nil
}

func (s *recordingService) ChangeWorkflowInstance(_ context.Context, actor, id, action string) (*api.WorkflowInstance, error) {
	s.call("ChangeWorkflowInstance", actor, id, action)
	return &api.WorkflowInstance{ID: id, Workflow: "etl", State: "paused", Tasks: []api.WorkflowTaskRun{}}, nil
}
