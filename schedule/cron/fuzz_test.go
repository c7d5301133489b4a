package cron

import (
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics and that every accepted
// expression round-trips: parsing its String gives the same String and the
// same fire times.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"0 0 12 * * ?", "0 */15 9-17 ? * MON-FRI", "0 0 12 LW * ?", "0 0 12 L-3W * ?",
		"0 0 12 15W * ?", "0 0 12 ? * 6#3", "0 0 12 ? * FRIL", "0 0 22-2 * * ? 2024/2",
		"10-20/3 50-10 20-4/3 28-3 NOV-FEB ?", "*/5 * * * *", "0 0 1,15 * MON", "@daily",
		"@every 90s", "0 0 12 ? * MON,,FRI", "0/0 * * * * ?", "@every", "0 0 12 0W * ?",
		"0 0 12 ? JAN/2 MON", "00000000000000000005 * * * * ?", "* * * * 7-1",
	} {
		f.Add(seed)
	}
	zones := []*time.Location{time.UTC, mustLoad(f, "America/New_York"), mustLoad(f, "Australia/Lord_Howe")}
	instants := []time.Time{
		time.Date(2024, 3, 10, 6, 59, 59, 0, time.UTC),
		time.Date(2024, 11, 3, 5, 30, 0, 0, time.UTC),
		time.Date(2031, 2, 28, 23, 0, 0, 0, time.UTC),
	}
	f.Fuzz(func(t *testing.T, expr string) {
		e, err := Parse(expr)
		if err != nil {
			return
		}
		_ = e.Explain()
		again, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", expr, e.String(), err)
		}
		if again.String() != e.String() {
			t.Fatalf("round trip of %q: %q then %q", expr, e.String(), again.String())
		}
		for _, loc := range zones {
			for _, at := range instants {
				a, b := e.NextN(at.In(loc), 3), again.NextN(at.In(loc), 3)
				if len(a) != len(b) {
					t.Fatalf("%q and %q differ after %s: %v vs %v", expr, e.String(), at.In(loc), a, b)
				}
				for i := range a {
					if !a[i].Equal(b[i]) {
						t.Fatalf("%q and %q differ after %s: %v vs %v", expr, e.String(), at.In(loc), a, b)
					}
				}
			}
		}
	})
}
