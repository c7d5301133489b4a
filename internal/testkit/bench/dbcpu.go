package bench

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat: USER_HZ,
// which Linux fixes at 100 per second for user space.
const clockTick = 10 * time.Millisecond

// dbServerCPU returns the CPU time the database server's processes on
// this machine have used so far, and false when none runs here (another
// machine's database, SQLite, or a system without /proc). For each
// process named one of names it adds the process's user and system time
// and those of its children that ended: PostgreSQL's postmaster reaps a
// backend when its connection closes, so a backend that ends between two
// readings is counted in full. The difference of two readings is what
// the server spent between them.
func dbServerCPU(names ...string) (time.Duration, bool) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, false
	}
	var ticks int64
	found := false
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // it ended since the glob
		}
		name, fields, ok := parseStat(b)
		if !ok || !slices.Contains(names, name) {
			continue
		}
		found = true
		// Fields after the command, from 0: state is 0, utime 11, stime
		// 12, cutime 13, cstime 14 (proc(5) numbers them 14 to 17).
		for _, i := range []int{11, 12, 13, 14} {
			n, err := strconv.ParseInt(string(fields[i]), 10, 64)
			if err == nil {
				ticks += n
			}
		}
	}
	return time.Duration(ticks) * clockTick, found
}

// parseStat splits a /proc/<pid>/stat line into the command name and the
// fields after it. The name is in parentheses and may hold spaces or
// parentheses itself, so it ends at the last ')'.
func parseStat(b []byte) (name string, fields [][]byte, ok bool) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", nil, false
	}
	fields = bytes.Fields(b[end+1:])
	if len(fields) < 15 {
		return "", nil, false
	}
	return string(b[open+1 : end]), fields, true
}

// dbServerNames are the process names of the database server a run uses,
// by the scheme of its database URL, when that server runs on this
// machine (the URL names a loopback address, localhost or a socket);
// none otherwise, since a local process of the same name would be
// another server.
func dbServerNames(databaseURL string) []string {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil
	}
	if host := u.Hostname(); host != "" && host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return nil
		}
	}
	switch u.Scheme {
	case "postgres", "postgresql":
		return []string{"postgres"}
	case "mysql":
		return []string{"mariadbd", "mysqld"}
	}
	return nil
}

// formatPerFire formats the database CPU per firing in milliseconds.
func formatPerFire(cpu time.Duration, fires int) string {
	if fires == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.3fms/fire", float64(cpu)/float64(time.Millisecond)/float64(fires))
}
