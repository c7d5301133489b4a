package auth_test

import (
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/server/httpapi"
)

// The server hands a *auth.Service to the HTTP API as its Authenticator.
var _ httpapi.Authenticator = (*auth.Service)(nil)
