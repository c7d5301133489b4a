// Package execid makes execution IDs: 32 lower-case hex digits, the
// first 12 the Unix time in milliseconds and the other 20 random.
//
// The time comes first so that the IDs made one after the other sort one
// after the other, mostly: an index keyed on them (the executions' and the
// history's primary keys) takes new rows at its right edge, in pages it
// already holds in memory, instead of at a random page each. It is a hint
// for the database's indexes, not an order anything relies on: clocks of
// several nodes differ, and IDs made in one millisecond sort at random.
// The 80 random bits keep two IDs from meeting.
package execid

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// New returns a new execution ID made at now.
func New(now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return hex.EncodeToString(b[:])
}
