package servertest_test

import (
	"net/http"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
)

func TestStart(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, &servertest.Options{Config: server.Config{DatabaseURL: db.URL(t), NodeID: "node-" + db.Dialect}})
			ctx := t.Context()

			me, err := srv.Client.Me(ctx)
			if err != nil || me.Name != servertest.AdminName || me.Role != api.RoleAdmin {
				t.Errorf("Client.Me = %+v, %v; want the admin", me, err)
			}
			if err := srv.Client.Ready(ctx); err != nil {
				t.Errorf("Ready after Start: %v", err)
			}
			nodes, err := srv.Client.Nodes(ctx)
			if err != nil || len(nodes) != 1 || nodes[0].ID != "node-"+db.Dialect || srv.Server.NodeID() != nodes[0].ID {
				t.Errorf("Nodes = %+v, %v; want the configured node", nodes, err)
			}

			// The password and token are the admin's, usable by other clients.
			anon, err := apiclient.New(srv.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := anon.Me(ctx); !apiclient.IsCode(err, api.CodeUnauthenticated) {
				t.Errorf("Me without a token: %v, want unauthenticated", err)
			}
			if _, err := anon.Login(ctx, servertest.AdminName, srv.AdminPassword); err != nil {
				t.Errorf("Login with AdminPassword: %v", err)
			}
			if who, err := anon.WithToken(srv.AdminToken).Me(ctx); err != nil || who.Name != servertest.AdminName {
				t.Errorf("Me with AdminToken = %+v, %v", who, err)
			}
			resp, err := http.Get(srv.URL + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET /healthz = %d", resp.StatusCode)
			}
		})
	}
}
