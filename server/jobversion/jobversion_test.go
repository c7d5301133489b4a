package jobversion_test

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/jobversion"
	"github.com/chime-scheduler/chime/store/sqlstore"
	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// TestVersions runs every behaviour on every dialect.
func TestVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, open func(*jobversion.Options) *jobversion.Versions)
	}{
		{"RecordListGet", testRecordListGet},
		{"RecordIsIdempotent", testIdempotent},
		{"Retention", testRetention},
		{"ConcurrentRecordsNumberInOrder", testConcurrent},
		{"Invalid", testInvalid},
		{"RecordAllIsOneStep", testRecordAll},
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			urlFor := db.Shared(t)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					url := urlFor(t)
					tc.run(t, func(o *jobversion.Options) *jobversion.Versions { return open(t, url, o) })
				})
			}
		})
	}
}

// open opens a store with a fresh scheduler name on url and returns its
// versions; both close when the test ends.
func open(t *testing.T, url string, opts *jobversion.Options) *jobversion.Versions {
	t.Helper()
	o := &sqlstore.Options{SchedulerName: "test-" + rand.Text(), Logger: slog.New(slog.DiscardHandler)}
	if !strings.HasPrefix(url, "sqlite:") {
		o.MaxOpenConns = 4
	}
	st, err := sqlstore.Open(t.Context(), url, o)
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	v, err := jobversion.New(t.Context(), st, opts)
	if err != nil {
		t.Fatalf("jobversion.New: %v", err)
	}
	return v
}

// version returns a version of job g/n to record.
func version(kind jobversion.Kind, i int) *jobversion.Version {
	return &jobversion.Version{
		Group: "g", Name: "n", ID: rand.Text(), JobVersion: int64(i), Kind: kind, Actor: "alice",
		Time: t0.Add(time.Duration(i) * time.Second),
		Spec: json.RawMessage(fmt.Sprintf(`{"description":"v%d"}`, i)),
	}
}

func record(t *testing.T, v *jobversion.Versions, ver *jobversion.Version) *jobversion.Version {
	t.Helper()
	got, err := v.Record(t.Context(), ver)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	return got
}

func testRecordListGet(t *testing.T, open func(*jobversion.Options) *jobversion.Versions) {
	v := open(nil)
	kinds := []jobversion.Kind{jobversion.Created, jobversion.Updated, jobversion.Deleted, jobversion.Created, jobversion.RolledBack}
	var want []jobversion.Version
	for i, k := range kinds {
		ver := version(k, i+1)
		if k == jobversion.RolledBack {
			ver.RolledBackFrom = 2
			ver.Masked = []string{"/http/headers/Authorization"}
		}
		got := record(t, v, ver)
		w := *ver
		w.Number = int64(i + 1)
		if diff := cmp.Diff(&w, got); diff != "" {
			t.Fatalf("Record returned (-want +got):\n%s", diff)
		}
		want = append([]jobversion.Version{w}, want...)
	}
	// Another job's versions are numbered on their own.
	other := version(jobversion.Created, 9)
	other.Name = "other"
	if got := record(t, v, other); got.Number != 1 {
		t.Errorf("first version of another job: number %d, want 1", got.Number)
	}

	got, err := v.List(t.Context(), "g", "n", 0, 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	page, err := v.List(t.Context(), "g", "n", 4, 2)
	if err != nil {
		t.Fatalf("List page: %v", err)
	}
	if diff := cmp.Diff(want[2:4], page); diff != "" {
		t.Errorf("List(before 4, limit 2) (-want +got):\n%s", diff)
	}
	one, err := v.Get(t.Context(), "g", "n", 3)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if diff := cmp.Diff(&want[2], one); diff != "" {
		t.Errorf("Get(3) (-want +got):\n%s", diff)
	}
	_, err = v.Get(t.Context(), "g", "n", 42)
	if !errors.Is(err, jobversion.ErrNotFound) || !strings.Contains(err.Error(), "no version 42") {
		t.Errorf("Get(42) = %v, want ErrNotFound naming version 42", err)
	}
}

func testIdempotent(t *testing.T, open func(*jobversion.Options) *jobversion.Versions) {
	v := open(nil)
	ver := version(jobversion.Created, 1)
	first := record(t, v, ver)
	again := *ver
	again.Kind = jobversion.Updated // a retry carries the same ID; what it says is ignored
	second := record(t, v, &again)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("second Record with the same ID (-first +second):\n%s", diff)
	}
	list, err := v.List(t.Context(), "g", "n", 0, 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != 1 {
		t.Errorf("List holds %d versions after a repeated Record, want 1", len(list))
	}
}

func testRetention(t *testing.T, open func(*jobversion.Options) *jobversion.Versions) {
	v := open(&jobversion.Options{Keep: 3})
	for i := 1; i <= 7; i++ {
		record(t, v, version(jobversion.Updated, i))
	}
	list, err := v.List(t.Context(), "g", "n", 0, 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var numbers []int64
	for _, ver := range list {
		numbers = append(numbers, ver.Number)
	}
	if diff := cmp.Diff([]int64{7, 6, 5}, numbers); diff != "" {
		t.Errorf("kept versions (-want +got):\n%s", diff)
	}
	if _, err := v.Get(t.Context(), "g", "n", 4); !errors.Is(err, jobversion.ErrNotFound) {
		t.Errorf("Get(4) after retention = %v, want ErrNotFound", err)
	}
}

func testConcurrent(t *testing.T, open func(*jobversion.Options) *jobversion.Versions) {
	v := open(nil)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := v.Record(t.Context(), version(jobversion.Updated, i)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Record: %v", err)
	}
	list, err := v.List(t.Context(), "g", "n", 0, 0)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list) != n {
		t.Fatalf("List holds %d versions, want %d", len(list), n)
	}
	for i, ver := range list {
		if ver.Number != int64(n-i) {
			t.Errorf("list[%d].Number = %d, want %d", i, ver.Number, n-i)
		}
	}
}

func testInvalid(t *testing.T, open func(*jobversion.Options) *jobversion.Versions) {
	v := open(nil)
	tests := []struct {
		name  string
		edit  func(*jobversion.Version)
		field string
	}{
		{"NoName", func(ver *jobversion.Version) { ver.Name = "" }, "Group/Name"},
		{"NoID", func(ver *jobversion.Version) { ver.ID = "" }, "ID"},
		{"BadKind", func(ver *jobversion.Version) { ver.Kind = "renamed" }, "Kind"},
		{"NoActor", func(ver *jobversion.Version) { ver.Actor = "" }, "Actor"},
		{"SpecNotJSON", func(ver *jobversion.Version) { ver.Spec = json.RawMessage("{") }, "Spec"},
	}
	for _, tc := range tests {
		ver := version(jobversion.Created, 1)
		tc.edit(ver)
		_, err := v.Record(t.Context(), ver)
		if !errors.Is(err, jobversion.ErrInvalid) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: Record = %v, want ErrInvalid naming %s", tc.name, err, tc.field)
		}
	}
	if list, err := v.List(t.Context(), "g", "n", 0, 0); err != nil || len(list) != 0 {
		t.Errorf("List after refused Records = %d versions, %v; want none", len(list), err)
	}
	if _, err := v.List(t.Context(), "g", "n", 0, jobversion.MaxListLimit+1); !errors.Is(err, jobversion.ErrInvalid) {
		t.Errorf("List with limit %d = %v, want ErrInvalid", jobversion.MaxListLimit+1, err)
	}
}

func testRecordAll(t *testing.T, open func(*jobversion.Options) *jobversion.Versions) {
	v := open(nil)
	a, b, again := version(jobversion.Created, 1), version(jobversion.Created, 2), version(jobversion.Updated, 3)
	b.Name = "other"
	bad := version(jobversion.Created, 4)
	bad.Actor = ""
	_, err := v.RecordAll(t.Context(), []*jobversion.Version{a, b, bad})
	if !errors.Is(err, jobversion.ErrInvalid) || !strings.Contains(err.Error(), "versions[2]") {
		t.Fatalf("RecordAll with a bad third version = %v, want ErrInvalid naming versions[2]", err)
	}
	if list, _ := v.List(t.Context(), "g", "n", 0, 0); len(list) != 0 {
		t.Fatalf("a refused RecordAll stored %d versions", len(list))
	}
	got, err := v.RecordAll(t.Context(), []*jobversion.Version{a, b, again})
	if err != nil {
		t.Fatalf("RecordAll: %v", err)
	}
	var numbers []string
	for _, ver := range got {
		numbers = append(numbers, fmt.Sprintf("%s:%d", ver.Name, ver.Number))
	}
	if diff := cmp.Diff([]string{"n:1", "other:1", "n:2"}, numbers); diff != "" {
		t.Errorf("RecordAll numbers (-want +got):\n%s", diff)
	}

	// A batch of 450 first versions of new jobs (more than one statement
	// of them), with a version of a job that has versions, a second
	// record of a stored version (its ID), and two versions of one new
	// job: each is numbered as recorded alone would be.
	var batch []*jobversion.Version
	for i := range 450 {
		ver := version(jobversion.Created, 10+i)
		ver.Name = fmt.Sprintf("new-%03d", i)
		batch = append(batch, ver)
	}
	next := version(jobversion.Updated, 5)
	twiceA, twiceB := version(jobversion.Created, 6), version(jobversion.Updated, 7)
	twiceA.Name, twiceB.Name = "twice", "twice"
	batch = append(batch, next, a, twiceA, twiceB)
	got, err = v.RecordAll(t.Context(), batch)
	if err != nil {
		t.Fatalf("RecordAll of %d: %v", len(batch), err)
	}
	numbers = numbers[:0]
	for _, ver := range got[448:] {
		numbers = append(numbers, fmt.Sprintf("%s:%d:%t", ver.Name, ver.Number, ver.ID == batch[448+len(numbers)].ID))
	}
	if diff := cmp.Diff([]string{"new-448:1:true", "new-449:1:true", "n:3:true", "n:1:true", "twice:1:true", "twice:2:true"}, numbers); diff != "" {
		t.Errorf("RecordAll numbers of the batch's end (-want +got):\n%s", diff)
	}
	for i := range 450 {
		list, err := v.List(t.Context(), "g", fmt.Sprintf("new-%03d", i), 0, 0)
		if err != nil || len(list) != 1 || list[0].Number != 1 || list[0].ID != batch[i].ID || string(list[0].Spec) != string(batch[i].Spec) {
			t.Fatalf("versions of new-%03d: %+v, %v; want the one recorded, numbered 1", i, list, err)
		}
	}
}

// TestRecordAloneIsOneStatement records versions of a job one at a time
// with Keep 3: on PostgreSQL and SQLite the first three are each one
// statement (recordAlone), the fourth, which prunes the oldest, and a
// second record of a stored ID take the transaction; MySQL takes the
// transaction for all. The versions are the same either way.
func TestRecordAloneIsOneStatement(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			v := open(t, db.URL(t), &jobversion.Options{Keep: 3})
			var last *jobversion.Version
			for i := 1; i <= 4; i++ {
				last = record(t, v, version(jobversion.Updated, i))
				if last.Number != int64(i) {
					t.Errorf("version %d numbered %d", i, last.Number)
				}
			}
			again := *last
			again.Spec = []byte(`{"description":"again"}`)
			if got := record(t, v, &again); got.Number != 4 || string(got.Spec) != string(last.Spec) {
				t.Errorf("a second record of version 4's ID: %+v, want the stored version 4", got)
			}
			list, err := v.List(t.Context(), "g", "n", 0, 0)
			if err != nil || len(list) != 3 || list[0].Number != 4 || list[2].Number != 2 {
				t.Errorf("versions kept: %+v, %v; want 4, 3 and 2", list, err)
			}
			want := int64(3)
			if db.Name == "MySQL" {
				want = 0
			}
			if got := v.RecordedAlone(); got != want {
				t.Errorf("%d versions recorded with one statement, want %d", got, want)
			}
		})
	}
}
