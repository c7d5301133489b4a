package auth_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	"golang.org/x/crypto/bcrypt"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// A first start: the service creates the first admin, who logs in and
// makes an API token for a deployment script.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "chime-auth-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.DiscardHandler)
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "chime.db"), &sqlstore.Options{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()

	// The cheapest bcrypt cost keeps the example quick; a server leaves
	// BcryptCost unset, for bcrypt.DefaultCost.
	svc, err := auth.New(ctx, st, &auth.Options{Logger: quiet, BcryptCost: bcrypt.MinCost})
	if err != nil {
		log.Fatal(err)
	}
	password, created, err := svc.Bootstrap(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("first admin created:", created, "with a password of", len(password), "characters")

	session, err := svc.Login(ctx, auth.BootstrapUser, password, "192.0.2.1:50000")
	if err != nil {
		log.Fatal(err)
	}
	token, err := svc.CreateToken(ctx, session.User, api.Token{Name: "deploy", Role: api.RoleOperator})
	if err != nil {
		log.Fatal(err)
	}

	r := httptest.NewRequest("POST", "/api/v1/jobs", nil)
	r.Header.Set("Authorization", "Bearer "+token.Secret)
	caller, err := svc.Authenticate(ctx, r)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("caller:", caller.Name, "as", caller.Role)
	fmt.Println("may edit jobs:", caller.Role.Includes(api.RoleOperator))
	fmt.Println("may manage users:", caller.Role.Includes(api.RoleAdmin))
	// Output:
	// first admin created: true with a password of 20 characters
	// caller: admin as operator
	// may edit jobs: true
	// may manage users: false
}
