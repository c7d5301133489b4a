package jobversion_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/chime-scheduler/chime/server/jobversion"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// The server records a version after each change of a job; a retried
// Record with the same ID stores nothing more, and only the newest Keep
// versions stay.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "jobversion-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "chime.db"), &sqlstore.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	versions, err := jobversion.New(ctx, st, &jobversion.Options{Keep: 2})
	if err != nil {
		log.Fatal(err)
	}

	for i, kind := range []jobversion.Kind{jobversion.Created, jobversion.Updated, jobversion.Deleted} {
		v := &jobversion.Version{
			Group: "reports", Name: "nightly", ID: fmt.Sprint("change-", i), Kind: kind, Actor: "alice",
			Spec: json.RawMessage(fmt.Sprintf(`{"description": "take %d"}`, i+1)),
		}
		for range 2 { // the second try changes nothing
			if _, err := versions.Record(ctx, v); err != nil {
				log.Fatal(err)
			}
		}
	}
	list, err := versions.List(ctx, "reports", "nightly", 0, 0)
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range list {
		fmt.Println(v.Number, v.Kind, v.Actor, string(v.Spec))
	}
	// Output:
	// 3 deleted alice {"description": "take 3"}
	// 2 updated alice {"description": "take 2"}
}
