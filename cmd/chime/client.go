package main

import "github.com/spf13/cobra"

// newClientCmds are the commands that talk to a server over its API. They
// are being built.
func newClientCmds() []*cobra.Command { return nil }
