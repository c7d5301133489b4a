// Package executor runs the work of chime server's "executor" jobs inside
// a team's own service: it registers with the server as an executor of a
// group, keeps its lease with heartbeats, long-polls for runs, runs each
// with the handler registered under its name, and reports the result.
// It is one client of the executor protocol (docs/executors.md), which an
// executor in any language can speak from the OpenAPI document.
//
//	ex, err := executor.New(executor.Config{
//		Server: "http://chime:8080", Token: os.Getenv("CHIME_TOKEN"), Group: "billing",
//	})
//	…
//	ex.Handle("invoice.close", func(ctx context.Context, r *executor.Run) error {
//		r.Logger.Info("closing invoices", "customer", r.Params["customer"])
//		return closeInvoices(ctx, r.Params)
//	})
//	err = ex.Run(ctx) // until ctx ends, then a graceful stop
//
// A handler's context is cancelled when the run is killed through the
// API, when its job's timeout passes, when the executor loses its lease
// on the run (it missed its heartbeats: the server may have handed the
// run to another executor), and when Run stops after its grace. Its
// Run.Logger's lines and what it writes to Run.Output are sent with the
// result and kept in the execution history.
//
// A run's result goes with the next poll when one is sent within a few
// milliseconds of the run's end, and alone otherwise: an executor whose
// runs end quickly sends about one request per batch of runs.
//
// # Leases and fencing
//
// Each run is leased to one executor under a fencing token that grows
// with every hand-over. A result sent under a stale token is refused by
// the server: an executor that was stopped (SIGSTOP) or cut off past its
// lease finds, when it comes back, that its heartbeat is refused; it
// cancels its runs, whose results the server refuses, and registers
// again under a new ID.
package executor
