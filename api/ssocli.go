package api

// SSOCodeExchange is the body of POST /auth/oidc/token: what chime login
// --sso sends once the browser brought the one-time code back to its
// loopback address. The answer is a Session, as for a password login.
type SSOCodeExchange struct {
	// Code is the one-time code the server's callback sent to the
	// loopback address.
	Code string `json:"code"`
	// Verifier is the PKCE code verifier whose S256 challenge started
	// the sign-on.
	Verifier string `json:"verifier"`
}
