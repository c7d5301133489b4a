package chime_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// sharedConformanceDir is the project's shared corpus, which the
// repository's copy follows.
const sharedConformanceDir = "../shared/conformance"

// TestConformanceCopyInStep fails when testdata/conformance differs from the
// shared corpus, so that the copy a fresh clone tests against is the one
// Quartz produced. Without the shared corpus beside the repository it has
// nothing to compare and skips, saying so, in CI too: a clone may stand
// anywhere.
func TestConformanceCopyInStep(t *testing.T) {
	t.Parallel()
	shared, err := os.ReadDir(sharedConformanceDir)
	if os.IsNotExist(err) {
		t.Skipf("needs the shared corpus: %s is absent", sharedConformanceDir)
	}
	if err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join("testdata", "conformance")
	own, err := os.ReadDir(copyDir)
	if err != nil {
		t.Fatal(err)
	}
	names := func(entries []os.DirEntry) []string {
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	if got, want := names(own), names(shared); !slices.Equal(got, want) {
		t.Fatalf("%s holds %q, the shared corpus %q", copyDir, got, want)
	}
	for _, e := range shared {
		want, err := os.ReadFile(filepath.Join(sharedConformanceDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(copyDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s: copy it again (cp %s/* %s/)", filepath.Join(copyDir, e.Name()), filepath.Join(sharedConformanceDir, e.Name()), sharedConformanceDir, copyDir)
		}
	}
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
