package names_test

import (
	"strings"
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/server/internal/names"
)

func TestProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, v, want string // want: a part of the problem; "" for none
	}{
		{"plain", "nightly-report", ""},
		{"non-ASCII at the limit", strings.Repeat("é", chime.MaxKeyLength), ""},
		{"inner space", "nightly report", ""},
		{"empty", "", "is required"},
		{"too long", strings.Repeat("a", chime.MaxKeyLength+1), "is 201 characters long; at most 200 are allowed"},
		{"not UTF-8", "a\xffb", "is not valid UTF-8"},
		{"NUL", "a\x00b", "contains the NUL character"},
		{"control", "a\tb", `"a\tb" contains a control character`},
		{"leading space", " a", `" a" starts or ends with a space`},
		{"trailing space", "a ", `"a " starts or ends with a space`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := names.Problem(tc.v)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("Problem(%q) = %q, want %q", tc.v, got, tc.want)
			}
		})
	}
}
