// Package clock is the source of time for chime's engine. Production code
// uses Real; tests drive the engine with testing/synctest (which fakes the
// real clock inside a bubble) or with their own Clock.
package clock

import "time"

// Clock tells the time and makes timers.
type Clock interface {
	// Now returns the current instant.
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer, as *time.Timer.
type Timer interface {
	// C delivers the time when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was
	// active.
	Stop() bool
	// Reset changes the timer to fire after d; it reports whether it was
	// active.
	Reset(d time.Duration) bool
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

// Offset is a clock shifted by a fixed duration from another clock. The
// engine uses it to fire on the database's time when the node's clock is
// off.
type Offset struct {
	Base   Clock
	Offset func() time.Duration
}

// Now returns the base clock's time plus the current offset.
func (o Offset) Now() time.Time { return o.Base.Now().Add(o.Offset()) }

// NewTimer returns a timer of the base clock: durations need no correction.
func (o Offset) NewTimer(d time.Duration) Timer { return o.Base.NewTimer(d) }
