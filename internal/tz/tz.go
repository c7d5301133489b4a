// Package tz holds the one rule for the time zones chime takes by name,
// in calendars, in the API's schedules and in the CLI: an IANA name that
// means the same on every node.
package tz

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnknown is wrapped by the error of Load.
var ErrUnknown = errors.New("not an IANA time zone")

// Load returns the IANA time zone called name. It refuses "" and
// "Local", which name the zone of whichever machine reads them, so that a
// time zone means the same on every node, and a name no zone has. The
// error's text names the value and gives an example.
func Load(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, fmt.Errorf("%q is %w such as \"Europe/Berlin\"", name, ErrUnknown)
	}
	return loc, nil
}
