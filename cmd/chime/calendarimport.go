package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// newCalendarsImportCmd is `chime calendars import NAME FILE.ics`: a
// holiday calendar from the events of an iCalendar file ("-" for standard
// input).
func newCalendarsImportCmd(cfg *clientConfig) *cobra.Command {
	var req api.CalendarImport
	cmd := &cobra.Command{
		Use:   "import NAME FILE.ics",
		Short: "Create or replace a holiday calendar excluding the dates of an iCalendar file's events",
		Long: "Create or replace the holiday calendar NAME with the dates the events of an iCalendar\n" +
			"file cover (all-day, multi-day, timed and recurring events, EXDATE honoured), such as a\n" +
			"public-holidays file exported by Google Calendar or Thunderbird. FILE.ics may be - for\n" +
			"standard input. With --dry-run, show the dates and store nothing.",
		Args: cobra.ExactArgs(2),
		RunE: cfg.run(func(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, args []string) error {
			text, err := readICS(cmd.InOrStdin(), args[1])
			if err != nil {
				return err
			}
			req.ICS = text
			res, err := c.ImportCalendar(ctx, args[0], req)
			if err != nil {
				return err
			}
			if cfg.output != formatTable {
				return writeStructured(cmd.OutOrStdout(), cfg.output, res)
			}
			return printImport(cmd.OutOrStdout(), args[0], res)
		}),
	}
	f := cmd.Flags()
	f.BoolVar(&req.DryRun, "dry-run", false, "show the dates the calendar would hold; store nothing")
	f.StringVar(&req.TimeZone, "time-zone", "", "the calendar's IANA time zone (default: the file's X-WR-TIMEZONE, else UTC)")
	f.StringVar(&req.Description, "description", "", "the calendar's description (default: the file's X-WR-CALNAME)")
	f.IntVar(&req.Years, "years", 0, "expand recurring events through this many years, the current one included (1 to 50; default 5)")
	return cmd
}

// readICS reads the file name, or standard input for "-".
func readICS(stdin io.Reader, name string) (string, error) {
	var (
		b   []byte
		err error
	)
	if name == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	if err != nil {
		return "", fmt.Errorf("reading the iCalendar file: %w", err)
	}
	return string(b), nil
}

// printImport says what an import did, and lists the dates.
func printImport(w io.Writer, name string, res *api.CalendarImportResult) error {
	verb := "replaced"
	switch {
	case res.DryRun && res.Created:
		verb = "would be created (dry run, nothing stored)"
	case res.DryRun:
		verb = "would be replaced (dry run, nothing stored)"
	case res.Created:
		verb = "created"
	}
	if _, err := fmt.Fprintf(w, "Calendar %s %s: %d dates from %d events.\n", name, verb, len(res.Dates), res.Events); err != nil {
		return err
	}
	if len(res.Dates) == 0 {
		return nil
	}
	_, err := fmt.Fprintln(w, strings.Join(res.Dates, "\n"))
	return err
}
