package calendar

import (
	"errors"
	"strings"
	"testing"
)

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
	}{
		{"holiday", `{"type":"holiday","tz":"America/New_York","excludedDates":["2024-03-10","2024-07-04"],"base":null}`},
		{"holiday without dates", `{"type":"holiday","tz":"UTC","excludedDates":[],"base":null}`},
		{"weekly", `{"type":"weekly","tz":"Asia/Shanghai","excludedDaysOfWeek":[1,4,7],"base":null}`},
		{"monthly", `{"type":"monthly","tz":"UTC","excludedDaysOfMonth":[1,29,30,31],"base":null}`},
		{"annual", `{"type":"annual","tz":"Europe/London","excludedDays":["01-01","02-29","12-25"],"base":null}`},
		{"daily", `{"type":"daily","tz":"Europe/Berlin","rangeStart":"08:59:59.500","rangeEnd":"17:00:00.250","invertTimeRange":true,"base":null}`},
		{"cron", `{"type":"cron","tz":"UTC","expr":"* * 0-5 ? * *","base":null}`},
		{"description", `{"type":"weekly","tz":"UTC","description":"weekends","excludedDaysOfWeek":[1,7],"base":null}`},
		{"chain", `{"type":"daily","tz":"UTC","rangeStart":"09:00:00.000","rangeEnd":"17:00:00.000","invertTimeRange":false,` +
			`"base":{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1,7],` +
			`"base":{"type":"holiday","tz":"UTC","excludedDates":["2024-12-25"],"base":null}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cal, err := Unmarshal([]byte(tt.in))
			if err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			out, err := Marshal(cal)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(out) != tt.in {
				t.Errorf("round trip:\n got %s\nwant %s", out, tt.in)
			}
		})
	}
}

func TestUnmarshalNormalizes(t *testing.T) {
	t.Parallel()
	cal, err := Unmarshal([]byte(`{"type":"daily","tz":"UTC","rangeStart":"09:00","rangeEnd":"17:00:00","base":null}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Marshal(cal)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"daily","tz":"UTC","rangeStart":"09:00:00.000","rangeEnd":"17:00:00.000","invertTimeRange":false,"base":null}`
	if string(out) != want {
		t.Errorf("Marshal = %s, want %s", out, want)
	}
	if _, err := Unmarshal([]byte(`{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[7,1,7]}`)); err != nil {
		t.Errorf("definition without base refused: %v", err)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		field string // empty: not a *FieldError (malformed JSON)
	}{
		{"unknown type", `{"type":"lunar","tz":"UTC","base":null}`, "type"},
		{"missing type", `{"tz":"UTC","base":null}`, "type"},
		{"missing zone", `{"type":"weekly","excludedDaysOfWeek":[1],"base":null}`, "tz"},
		{"Local zone", `{"type":"weekly","tz":"Local","excludedDaysOfWeek":[1],"base":null}`, "tz"},
		{"unknown zone", `{"type":"weekly","tz":"Mars/Olympus_Mons","excludedDaysOfWeek":[1],"base":null}`, "tz"},
		{"field of another type", `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1],"expr":"* * * ? * *","base":null}`, "expr"},
		{"bad date", `{"type":"holiday","tz":"UTC","excludedDates":["2024-02-30"],"base":null}`, "excludedDates[0]"},
		{"day of week 0", `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[0],"base":null}`, "excludedDaysOfWeek[0]"},
		{"day of week 8", `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1,8],"base":null}`, "excludedDaysOfWeek[1]"},
		{"day of month 32", `{"type":"monthly","tz":"UTC","excludedDaysOfMonth":[32],"base":null}`, "excludedDaysOfMonth[0]"},
		{"bad day of year", `{"type":"annual","tz":"UTC","excludedDays":["12-25","04-31"],"base":null}`, "excludedDays[1]"},
		{"missing range end", `{"type":"daily","tz":"UTC","rangeStart":"10:00:00.000","base":null}`, "rangeEnd"},
		{"bad range start", `{"type":"daily","tz":"UTC","rangeStart":"25:00:00.000","rangeEnd":"26:00:00.000","base":null}`, "rangeStart"},
		{"empty range", `{"type":"daily","tz":"UTC","rangeStart":"10:00:00.000","rangeEnd":"10:00:00.000","base":null}`, "rangeEnd"},
		{"range across midnight", `{"type":"daily","tz":"UTC","rangeStart":"22:00:00.000","rangeEnd":"02:00:00.000","invertTimeRange":true,"base":null}`, "rangeEnd"},
		{"missing expression", `{"type":"cron","tz":"UTC","base":null}`, "expr"},
		{"bad expression", `{"type":"cron","tz":"UTC","expr":"0/0 * * ? * *","base":null}`, "expr"},
		{"error in a base", `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1],"base":{"type":"daily","tz":"Nowhere/Land","rangeStart":"01:00","rangeEnd":"02:00","base":null}}`, "base.tz"},
		{"error deep in a base", `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1],"base":{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1],"base":{"type":"monthly","tz":"UTC","excludedDaysOfMonth":[0],"base":null}}}`, "base.base.excludedDaysOfMonth[0]"},
		{"unknown field", `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1],"colour":"red","base":null}`, ""},
		{"wrong value type", `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":["MON"],"base":null}`, ""},
		{"trailing data", `{"type":"weekly","tz":"UTC","excludedDaysOfWeek":[1],"base":null} {}`, ""},
		{"not an object", `[]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cal, err := Unmarshal([]byte(tt.in))
			if err == nil {
				t.Fatalf("Unmarshal accepted %s as %v", tt.in, cal)
			}
			if tt.field != "" {
				checkFieldError(t, err, tt.field)
			}
		})
	}
}

func TestUnmarshalUnknownZoneNamesIt(t *testing.T) {
	t.Parallel()
	_, err := Unmarshal([]byte(`{"type":"weekly","tz":"Mars/Olympus_Mons","excludedDaysOfWeek":[1],"base":null}`))
	if !errors.Is(err, ErrUnknownTimeZone) {
		t.Errorf("errors.Is(%v, ErrUnknownTimeZone) = false", err)
	}
	if err == nil || !strings.Contains(err.Error(), "Mars/Olympus_Mons") {
		t.Errorf("error %v does not name the zone", err)
	}
}

func TestMarshalErrors(t *testing.T) {
	t.Parallel()
	if _, err := Marshal(nil); err == nil {
		t.Errorf("Marshal(nil) succeeded")
	}
	if _, err := Marshal(foreign{}); err == nil {
		t.Errorf("Marshal of a foreign calendar succeeded")
	}
}
