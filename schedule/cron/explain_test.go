package cron

import "testing"

func TestExplain(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want string
	}{
		{"0 0 2 LW * ?", "At 02:00, on the last weekday of every month"},
		{"0 0 12 * * ?", "At 12:00, every day"},
		{"15 10 8,12,17 * * ?", "At 08:10:15, 12:10:15 and 17:10:15, every day"},
		{"0 */15 * * * ?", "Every 15 minutes"},
		{"* * * * * ?", "Every second"},
		{"0 * * * * ?", "Every minute"},
		{"0 0 * * * ?", "At minute 0, every hour"},
		{"0 */15 9-17 * * ?", "Every 15 minutes, between 09:00 and 17:59"},
		{"0 15,45 9-17 * * ?", "At minutes 15 and 45, between 09:00 and 17:59"},
		{"0 0 9-17/2 ? * *", "At minute 0, every 2 hours from hour 9 through 17"},
		{"0 0 12 ? * MON-FRI", "At 12:00, on Monday through Friday"},
		{"0 0 12 ? * 6#3", "At 12:00, on the third Friday of every month"},
		{"0 0 12 ? * FRIL", "At 12:00, on the last Friday of every month"},
		{"0 0 12 L * ?", "At 12:00, on the last day of every month"},
		{"0 0 12 L-3 * ?", "At 12:00, 3 days before the last day of every month"},
		{"0 0 12 L-1W * ?", "At 12:00, on the weekday nearest 1 day before the last day of every month"},
		{"0 0 12 15W JAN,JUL ?", "At 12:00, on the weekday nearest day 15 of January and July"},
		{"0 0 12 1,15 * ? 2024-2030", "At 12:00, on days 1 and 15 of every month, in years 2024 through 2030"},
		{"0 0 12 ? JAN-MAR SAT,SUN", "At 12:00, on Saturday and Sunday, in January through March"},
		{"0 0 12 ? * L", "At 12:00, on Saturday"},
		{"0 0 * * 1-5", "At 00:00, on Monday through Friday"},
		{"5 4 */2 * *", "At 04:05, every 2 days of every month"},
		{"*/5 9-17 1,15 * MON", "Every 5 minutes, between 09:00 and 17:59, on days 1 and 15 of the month or on Monday"},
		{"@daily", "At 00:00, every day"},
		{"@weekly", "At 00:00, on Sunday"},
		{"@every 90m", "Every 1h30m0s, counted from the previous fire time"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()
			got, err := Explain(tt.expr)
			if err != nil {
				t.Fatalf("Explain(%q): %v", tt.expr, err)
			}
			if got != tt.want {
				t.Errorf("Explain(%q) = %q, want %q", tt.expr, got, tt.want)
			}
		})
	}
	if _, err := Explain("0 0 12 * * *"); err == nil {
		t.Errorf("Explain of an invalid expression succeeded")
	}
}
