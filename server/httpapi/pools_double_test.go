package httpapi

import (
	"context"

	"github.com/chime-scheduler/chime/api"
)

func (s *recordingService) ListPools(context.Context) ([]api.Pool, error) {
	s.call("ListPools", "")
	return nil, nil
}

func (s *recordingService) GetPool(_ context.Context, name string) (*api.Pool, error) {
	s.call("GetPool", "", name)
	return &api.Pool{Name: name, Limit: 4}, nil
}

func (s *recordingService) PutPool(_ context.Context, actor string, p api.Pool) (*api.Pool, bool, error) {
	s.call("PutPool", actor, p)
	return &p, true, nil
}

func (s *recordingService) DeletePool(_ context.Context, actor, name string) error {
	s.call("DeletePool", actor, name)
	return nil
}
