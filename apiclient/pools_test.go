package apiclient_test

import (
	"errors"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestPools creates, reads, changes and deletes a pool through the
// client, and sees a refused limit and a delete refused while a job
// names the pool as *api.Errors.
func TestPools(t *testing.T) {
	t.Parallel()
	c := servertest.Start(t, nil).Client
	ctx := t.Context()
	p, created, err := c.PutPool(ctx, api.Pool{Name: "reports", Limit: 4, Description: "report jobs"})
	if err != nil || !created || p.Limit != 4 || p.Created == nil {
		t.Fatalf("PutPool = %+v, %v, %v; want created with limit 4", p, created, err)
	}
	if p, created, err = c.PutPool(ctx, api.Pool{Name: "reports", Limit: 2}); err != nil || created || p.Limit != 2 {
		t.Fatalf("PutPool again = %+v, %v, %v; want replaced with limit 2", p, created, err)
	}
	var ae *api.Error
	if _, _, err := c.PutPool(ctx, api.Pool{Name: "reports", Limit: -1}); !errors.As(err, &ae) || ae.Field != "limit" {
		t.Errorf("PutPool with limit -1 = %v, want an error naming limit", err)
	}
	job := api.Job{Group: "rep", Name: "daily", Type: "http", HTTP: []byte(`{"url":"http://127.0.0.1:9/"}`), Pool: "reports"}
	if _, err := c.CreateJob(ctx, job); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	list, err := c.ListPools(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "reports" || len(list[0].Jobs) != 1 || list[0].Jobs[0] != "rep/daily" {
		t.Fatalf("ListPools = %+v, %v; want reports named by rep/daily", list, err)
	}
	if err := c.DeletePool(ctx, "reports"); !errors.As(err, &ae) || ae.Code != api.CodeConflict {
		t.Errorf("DeletePool while a job names it = %v, want conflict", err)
	}
	if err := c.DeleteJob(ctx, "rep", "daily"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeletePool(ctx, "reports"); err != nil {
		t.Fatalf("DeletePool: %v", err)
	}
	if _, err := c.GetPool(ctx, "reports"); !errors.As(err, &ae) || ae.Code != api.CodeNotFound {
		t.Errorf("GetPool after DeletePool = %v, want not_found", err)
	}
}
