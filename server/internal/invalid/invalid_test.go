package invalid_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/chime-scheduler/chime/server/internal/invalid"
)

func TestError(t *testing.T) {
	t.Parallel()
	errA := errors.New("a: invalid request")
	errB := errors.New("b: invalid request")
	tests := []struct {
		name string
		err  *invalid.Error
		want string
	}{
		{"field", invalid.New(errA, "Query.Limit", "is %d, want at most %d", 900, 500), "a: invalid request: Query.Limit is 900, want at most 500"},
		{"whole request", invalid.New(errA, "", "is empty"), "a: invalid request: is empty"},
		{"no sentinel", &invalid.Error{Field: "x", Reason: "is bad"}, "invalid request: x is bad"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
	wrapped := fmt.Errorf("doing: %w", invalid.New(errA, "f", "bad"))
	if !errors.Is(wrapped, errA) || errors.Is(wrapped, errB) {
		t.Errorf("errors.Is: want a match with its own sentinel only")
	}
	if e, ok := errors.AsType[*invalid.Error](wrapped); !ok || e.Field != "f" {
		t.Errorf("errors.As = %v, %v; want the Error about f", e, ok)
	}
}
