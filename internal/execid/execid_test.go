package execid_test

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/execid"
)

func TestNewIsHexWithTheTimeFirst(t *testing.T) {
	format := regexp.MustCompile(`^[0-9a-f]{32}$`)
	at := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := execid.New(at.Add(time.Duration(i) * time.Millisecond))
		if !format.MatchString(id) {
			t.Fatalf("ID %q is not 32 lower-case hex digits", id)
		}
		if seen[id] {
			t.Fatalf("ID %q made twice", id)
		}
		seen[id] = true
		if id <= prev {
			t.Fatalf("ID %q, made a millisecond after %q, sorts before it", id, prev)
		}
		prev = id
	}
	// The first 12 digits are the milliseconds.
	if got, want := execid.New(at)[:12], "01a22575b200"; got != want {
		t.Errorf("time prefix of %s: %s, want %s (%d ms)", at, got, want, at.UnixMilli())
	}
	// Made in one millisecond, the IDs still differ.
	if a, b := execid.New(at), execid.New(at); a == b {
		t.Errorf("two IDs made at one instant are both %s", a)
	}
}

func ExampleNew() {
	id := execid.New(time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC))
	fmt.Println(len(id), id[:12])
	// Output: 32 01a22575b200
}
