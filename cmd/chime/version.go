package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/server"
)

// newVersionCmd is `chime version`.
func newVersionCmd() *cobra.Command {
	var output outputFormat
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version chime was built from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := server.ReadBuildInfo()
			if output != formatTable {
				return writeStructured(cmd.OutOrStdout(), output, v)
			}
			return writeVersion(cmd.OutOrStdout(), v)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// writeVersion prints v for people.
func writeVersion(w io.Writer, v server.BuildInfo) error {
	t := newTable(w)
	t.row("Version:", v.Version)
	rev := "unknown (built without VCS information)"
	if v.Revision != "" {
		rev = v.Revision
		if v.Time != "" {
			rev += " (" + v.Time + ")"
		}
		if v.Modified {
			rev += ", with uncommitted changes"
		}
	}
	t.row("Revision:", rev)
	t.row("Go:", fmt.Sprintf("%s %s", v.GoVersion, v.Platform))
	return t.flush()
}
