package auth

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// Limits of names and passwords.
const (
	// MinPasswordLength is the least number of characters of a password.
	MinPasswordLength = 12
	// MaxPasswordBytes is the most bytes of a password: bcrypt reads no
	// further, so a longer one would be silently cut.
	MaxPasswordBytes = 72
	// MaxNameLength is the most characters of a user or token name.
	MaxNameLength = 64
)

// validateUserName checks a user name: 1 to 64 of a-z, 0-9, '.', '_', '-'
// and '@', starting with a letter or digit. Names are lower case so that
// "Ann" and "ann" cannot be two users.
func validateUserName(field, name string) *api.Error {
	if name == "" {
		return httpjson.Errorf(api.CodeInvalidArgument, field, "required")
	}
	if len(name) > MaxNameLength {
		return httpjson.Errorf(api.CodeInvalidArgument, field, "is %d characters long, at most %d allowed", len(name), MaxNameLength)
	}
	for i, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case i > 0 && strings.ContainsRune("._-@", c):
		default:
			return httpjson.Errorf(api.CodeInvalidArgument, field,
				"%q: want lower-case letters, digits, '.', '_', '-' and '@', starting with a letter or digit", name)
		}
	}
	return nil
}

// validateTokenName checks a token name: 1 to 64 printable characters,
// without leading or trailing spaces.
func validateTokenName(name string) *api.Error {
	const field = "name"
	switch {
	case name == "":
		return httpjson.Errorf(api.CodeInvalidArgument, field, "required")
	case !utf8.ValidString(name):
		return httpjson.Errorf(api.CodeInvalidArgument, field, "is not valid UTF-8")
	case utf8.RuneCountInString(name) > MaxNameLength:
		return httpjson.Errorf(api.CodeInvalidArgument, field, "is %d characters long, at most %d allowed",
			utf8.RuneCountInString(name), MaxNameLength)
	case strings.TrimSpace(name) != name:
		return httpjson.Errorf(api.CodeInvalidArgument, field, "%q starts or ends with a space", name)
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
		return httpjson.Errorf(api.CodeInvalidArgument, field, "%q holds a character that is not printable", name)
	}
	return nil
}

// ValidatePassword checks a new password as CreateUser and UpdateUser do:
// at least MinPasswordLength characters and at most MaxPasswordBytes
// bytes. The error is an *api.Error naming the field "password".
func ValidatePassword(password string) error {
	if e := validatePassword(password); e != nil {
		return e
	}
	return nil
}

// validatePassword checks a new password's length. Its content is the
// user's business; its length is what makes it hard to guess.
func validatePassword(password string) *api.Error {
	const field = "password"
	switch {
	case password == "":
		return httpjson.Errorf(api.CodeInvalidArgument, field, "required")
	case utf8.RuneCountInString(password) < MinPasswordLength:
		return httpjson.Errorf(api.CodeInvalidArgument, field, "must be at least %d characters", MinPasswordLength)
	case len(password) > MaxPasswordBytes:
		return httpjson.Errorf(api.CodeInvalidArgument, field, "must be at most %d bytes (bcrypt reads no more)", MaxPasswordBytes)
	}
	return nil
}

// validateRole checks a role; required says whether it may be empty.
func validateRole(role api.Role, required bool) *api.Error {
	const field = "role"
	if role == "" && !required {
		return nil
	}
	if !role.Valid() {
		what := fmt.Sprintf("%q is not a role", role)
		if role == "" {
			what = "required"
		}
		return httpjson.Errorf(api.CodeInvalidArgument, field, "%s: want %s, %s or %s",
			what, api.RoleViewer, api.RoleOperator, api.RoleAdmin)
	}
	return nil
}
