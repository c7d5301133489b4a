// Package schedule computes when triggers fire, with the semantics of
// Quartz 2.3.2. It is pure code: no I/O, no clock, no package state; every
// instant is an input.
//
// # Model
//
// A Schedule is a timing rule, one of five immutable kinds:
//
//   - *Cron: the instants a Quartz cron expression matches in a time zone
//     (package schedule/cron does the expression work).
//   - *Simple: a start time, then every RepeatInterval, RepeatCount more
//     times (or forever).
//   - *CalendarInterval: every N seconds, minutes, hours, days, weeks,
//     months or years on a time zone's calendar, keeping the local time of
//     day for calendar units and clamping month ends.
//   - *DailyTimeInterval: every N seconds, minutes or hours within a window
//     of each chosen day of the week.
//   - *FixedDelay: a start time, then Delay after the end of each run (not
//     a Quartz kind). Its next fire time is unknown until the run ends:
//     Triggered leaves it zero, and the store re-arms the trigger at the
//     recorded end plus Delay when it records the end, including the end
//     recovery gives a lost node's run (see Trigger.Rearm).
//
// A Trigger is a schedule plus its firing window (StartTime, EndTime), its
// misfire instruction and its state (NextFireTime, PreviousFireTime,
// TimesTriggered). Trigger is a plain value: the engine loads it from the
// store, calls its methods and writes it back. Its life is:
//
//  1. ComputeFirstFireTime when the trigger is scheduled;
//  2. Triggered each time it fires, which advances NextFireTime;
//  3. UpdateAfterMisfire when the scheduler finds NextFireTime too far in
//     the past, which applies the misfire instruction at an instant "now";
//  4. done when NextFireTime is zero (MayFireAgain reports false).
//
// Upcoming previews the next fire times without changing the trigger.
//
// # Calendars
//
// Every method that computes a next fire time takes an optional Calendar
// (package calendar implements it). An excluded fire time is skipped, not
// postponed: the trigger moves on to its next fire time the calendar
// includes. For a simple schedule a skipped fire time still uses up one
// repeat, as in Quartz. Skipping always terminates: across a long excluded
// stretch the trigger jumps straight to the calendar's next included
// instant, and when the calendar includes nothing more (before the year
// 2200) the trigger never fires again.
//
// # Quartz semantics, and where chime differs
//
// Fire times match Quartz 2.3.2 exactly, including its daylight-saving
// behaviour (a wall time in a spring-forward gap moves forward, a repeated
// wall time is taken at its second occurrence), the month-end clamping that
// persists in calendar-interval triggers, and the arithmetic of every misfire
// instruction. The deliberate differences are:
//
//   - With FIRE_ONCE_NOW or SMART_POLICY, a cron, calendar-interval or
//     daily-time-interval trigger whose end time has passed completes
//     instead of firing once more.
//   - A daily-time-interval schedule carries its own time zone; Quartz uses
//     the JVM's default zone.
//   - A daily-time-interval trigger never fires after its end time; Quartz
//     can return one time of day past it.
//   - Nothing is computed in or after the year 2200 (Quartz gives up at the
//     current year + 100 in some loops and loops forever in others).
//
// Times are handled to the millisecond, as in Java: inputs are truncated to
// the millisecond and cron fire times are whole seconds.
//
// # Persistence
//
// Marshal and Unmarshal convert a Schedule to and from JSON with a "kind"
// discriminator; Unmarshal validates. The trigger's state is stored by the
// store in its own columns.
package schedule
