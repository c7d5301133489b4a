package cron

import (
	"testing"
	"time"
)

func BenchmarkNext(b *testing.B) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		expr string
		loc  *time.Location
	}{
		{"every-15-minutes-utc", "0 */15 * * * ?", time.UTC},
		{"daily-noon-berlin", "0 0 12 * * ?", berlin},
		{"weekdays-berlin", "0 30 9 ? * MON-FRI", berlin},
		{"last-weekday-berlin", "0 0 2 LW * ?", berlin},
		{"third-friday-utc", "0 0 10 ? * 6#3", time.UTC},
		{"standard-or-berlin", "*/5 9-17 1,15 * MON", berlin},
		{"never-feb-30", "0 0 0 30 2 ?", time.UTC},
	}
	for _, c := range cases {
		e, err := Parse(c.expr)
		if err != nil {
			b.Fatal(err)
		}
		after := time.Date(2024, 3, 7, 13, 47, 12, 0, c.loc)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			t := after
			for b.Loop() {
				t = e.Next(t)
				if t.IsZero() {
					t = after
				}
			}
		})
	}
}
