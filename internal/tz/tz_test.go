package tz_test

import (
	"errors"
	"testing"

	"github.com/chime-scheduler/chime/internal/tz"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	if loc, err := tz.Load("Europe/Berlin"); err != nil || loc.String() != "Europe/Berlin" {
		t.Errorf("Load(Europe/Berlin) = %v, %v", loc, err)
	}
	for _, name := range []string{"", "Local", "Mars/Olympus_Mons", "../etc/passwd"} {
		want := `"` + name + `" is not an IANA time zone such as "Europe/Berlin"`
		loc, err := tz.Load(name)
		if err == nil || err.Error() != want || !errors.Is(err, tz.ErrUnknown) {
			t.Errorf("Load(%q) = %v, %v; want the error %s", name, loc, err, want)
		}
	}
}
