package livelog_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/chime-scheduler/chime/server/livelog"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// A node's runner logs through a Buffer while an execution runs; any node
// reads the lines as they arrive, and the execution's end deletes them.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "livelog-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "chime.db"), &sqlstore.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	l, err := livelog.New(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}

	b := livelog.NewBuffer(l, nil)
	b.Start()
	defer b.Stop(ctx)
	at := time.Date(2030, 3, 1, 2, 0, 0, 0, time.UTC)
	b.Begin("exec-1")
	b.Add("exec-1", livelog.Line{Seq: 1, Time: at, Level: "INFO", Message: "fetching", Attrs: map[string]any{"rows": 42}})
	b.Add("exec-1", livelog.Line{Seq: 2, Time: at.Add(time.Second), Level: "INFO", Message: "done"})
	if err := b.Flush(ctx); err != nil { // the buffer's goroutine does this every 300ms
		log.Fatal(err)
	}

	lines, err := l.Read(ctx, "exec-1", 0, 100)
	if err != nil {
		log.Fatal(err)
	}
	for _, ln := range lines {
		fmt.Println(ln.Seq, ln.Level, ln.Message, ln.Attrs)
	}
	if err := b.End(ctx, "exec-1"); err != nil { // once the history holds them
		log.Fatal(err)
	}
	lines, _ = l.Read(ctx, "exec-1", 0, 100)
	fmt.Println(len(lines), "lines left")
	// Output:
	// 1 INFO fetching map[rows:42]
	// 2 INFO done map[]
	// 0 lines left
}
