package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// stream is what go test -json printed for three packages: one passing with
// two tests skipped for want of a database, one failing, one without tests.
const stream = `{"Action":"start","Package":"example/a"}
{"Action":"run","Package":"example/a","Test":"TestPG"}
{"Action":"output","Package":"example/a","Test":"TestPG","Output":"=== RUN   TestPG\n"}
{"Action":"output","Package":"example/a","Test":"TestPG","Output":"    dbtest.go:231: needs PostgreSQL: set CHIME_TEST_POSTGRES_URL\n"}
{"Action":"output","Package":"example/a","Test":"TestPG","Output":"--- SKIP: TestPG (0.00s)\n"}
{"Action":"skip","Package":"example/a","Test":"TestPG"}
{"Action":"run","Package":"example/a","Test":"TestPG2"}
{"Action":"output","Package":"example/a","Test":"TestPG2","Output":"    dbtest.go:231: needs PostgreSQL: set CHIME_TEST_POSTGRES_URL\n"}
{"Action":"skip","Package":"example/a","Test":"TestPG2"}
{"Action":"run","Package":"example/a","Test":"TestBrowser"}
{"Action":"output","Package":"example/a","Test":"TestBrowser","Output":"    browsertest.go:70: needs Chromium: apt-get install -y chromium\n"}
{"Action":"skip","Package":"example/a","Test":"TestBrowser"}
{"Action":"run","Package":"example/a","Test":"TestOK"}
{"Action":"output","Package":"example/a","Test":"TestOK","Output":"    a_test.go:9: chatty log line\n"}
{"Action":"pass","Package":"example/a","Test":"TestOK"}
{"Action":"output","Package":"example/a","Output":"PASS\n"}
{"Action":"output","Package":"example/a","Output":"ok  \texample/a\t0.010s\n"}
{"Action":"pass","Package":"example/a"}
{"Action":"run","Package":"example/b","Test":"TestBad"}
{"Action":"output","Package":"example/b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"example/b","Test":"TestBad","Output":"    b_test.go:5: got 1, want 2\n"}
{"Action":"output","Package":"example/b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"example/b","Test":"TestBad"}
{"Action":"output","Package":"example/b","Output":"FAIL\n"}
{"Action":"output","Package":"example/b","Output":"FAIL\texample/b\t0.020s\n"}
{"Action":"fail","Package":"example/b"}
{"Action":"output","Package":"example/c","Output":"?   \texample/c\t[no test files]\n"}
{"Action":"skip","Package":"example/c"}
`

func TestReport(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	r := newReport(&out, false)
	if err := r.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	r.summary(90 * time.Second)
	want := "ok  \texample/a\t0.010s\n" +
		"    b_test.go:5: got 1, want 2\n" +
		"--- FAIL: TestBad (0.00s)\n" +
		"FAIL\n" +
		"FAIL\texample/b\t0.020s\n" +
		"?   \texample/c\t[no test files]\n" +
		"FAIL: 1 package(s): example/b\n" +
		"testreport: 3 tests skipped (1m30s) — 2: needs PostgreSQL: set CHIME_TEST_POSTGRES_URL; 1: needs Chromium: apt-get install -y chromium\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if r.failed != 1 {
		t.Errorf("failed = %d, want 1", r.failed)
	}
}

func TestSkipLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		total int
		by    map[string]int
		want  string
	}{
		{"nothing skipped", 0, nil, "testreport: no test skipped (5s)"},
		{
			"more reasons than named", 7,
			map[string]int{"a": 1, "b": 3, "c": 1, "d": 1, "e": 1},
			"testreport: 7 tests skipped (5s) — 3: b; 1: a; 1: c; 1: d; 1 for other reasons (run with -v to see them)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := skipLine(tt.total, tt.by, 5*time.Second); got != tt.want {
				t.Errorf("skipLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHasPackage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"-race"}, false},
		{[]string{"-run", "TestX"}, false},
		{[]string{"-run=TestX", "./server/..."}, true},
		{[]string{"-count", "1", "."}, true},
	}
	for _, tt := range tests {
		if got := hasPackage(tt.args); got != tt.want {
			t.Errorf("hasPackage(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}
