package chime_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// conformanceDir is where the cases produced by real Quartz live: the
// repository's copy in testdata/conformance, or the directory
// CHIME_CONFORMANCE_DIR names, so CI can run the same test on cases this
// repository has never seen.
func conformanceDir() string {
	if dir := os.Getenv("CHIME_CONFORMANCE_DIR"); dir != "" {
		return dir
	}
	return filepath.Join("testdata", "conformance")
}

// conformanceCheck compares one JSON line with chime's behaviour and returns
// a description of the first difference, or nil when the case passes.
type conformanceCheck func(line []byte) error

// TestConformance runs every case file against chime and fails when a file is
// missing or any case differs.
func TestConformance(t *testing.T) {
	files := []struct {
		name  string
		check conformanceCheck
	}{
		{"cron.jsonl", checkCronCase},
		{"cron_parse.jsonl", checkCronParseCase},
		{"simple.jsonl", checkSimpleCase},
		{"calendar_interval.jsonl", checkCalendarIntervalCase},
		{"daily_time_interval.jsonl", checkDailyTimeIntervalCase},
		{"calendars.jsonl", checkCalendarCase},
		{"misfire.jsonl", checkMisfireCase},
	}
	dir := conformanceDir()
	for _, file := range files {
		t.Run(file.name, func(t *testing.T) {
			path := filepath.Join(dir, file.name)
			f, err := os.Open(path)
			if err != nil {
				t.Fatalf("conformance file missing: %v", err)
			}
			defer f.Close()
			scanner := bufio.NewScanner(f)
			scanner.Buffer(make([]byte, 0, 1<<20), 16<<20)
			passed, failed, line := 0, 0, 0
			for scanner.Scan() {
				line++
				raw := scanner.Bytes()
				if len(raw) == 0 {
					continue
				}
				if err := file.check(raw); err != nil {
					failed++
					if failed <= 20 {
						t.Errorf("%s:%d: %v", file.name, line, err)
					}
					continue
				}
				passed++
			}
			if err := scanner.Err(); err != nil {
				t.Fatalf("read %s: %v", path, err)
			}
			if passed+failed == 0 {
				t.Fatalf("%s holds no cases", path)
			}
			fmt.Printf("conformance %s: %d passed, %d failed\n", file.name, passed, failed)
			if failed > 0 {
				t.Errorf("%s: %d of %d cases differ from Quartz", file.name, failed, passed+failed)
			}
		})
	}
}
