package schedule

// MisfireInstruction says what a trigger does when the scheduler finds it
// past its next fire time (it was not fired on time: the scheduler was down,
// every worker was busy, the trigger was paused). The names are Quartz's.
type MisfireInstruction string

// Misfire instructions. SMART_POLICY and IGNORE_MISFIRE_POLICY apply to
// every kind; FIRE_ONCE_NOW and DO_NOTHING to cron, calendar-interval,
// daily-time-interval and fixed-delay schedules; the others to simple
// schedules only. For fixed-delay schedules see FixedDelay.
const (
	// MisfireSmartPolicy picks an instruction from the schedule: FIRE_ONCE_NOW
	// for cron, calendar-interval and daily-time-interval schedules; for a
	// simple schedule FIRE_NOW when it does not repeat,
	// RESCHEDULE_NEXT_WITH_REMAINING_COUNT when it repeats forever and
	// RESCHEDULE_NOW_WITH_EXISTING_REPEAT_COUNT otherwise. The empty
	// instruction means the same.
	MisfireSmartPolicy MisfireInstruction = "SMART_POLICY"
	// MisfireIgnore fires every missed time as soon as possible, then carries
	// on as if nothing happened: the trigger's state is left unchanged.
	MisfireIgnore MisfireInstruction = "IGNORE_MISFIRE_POLICY"
	// MisfireFireOnceNow fires once now, then follows the schedule. chime
	// completes the trigger instead when its end time has passed.
	MisfireFireOnceNow MisfireInstruction = "FIRE_ONCE_NOW"
	// MisfireDoNothing skips the missed fire times: the next fire time is the
	// first one after now.
	MisfireDoNothing MisfireInstruction = "DO_NOTHING"
	// MisfireFireNow fires a non-repeating simple trigger now; on a repeating
	// one it acts as RESCHEDULE_NOW_WITH_REMAINING_REPEAT_COUNT.
	MisfireFireNow MisfireInstruction = "FIRE_NOW"
	// MisfireRescheduleNowWithExistingRepeatCount restarts the simple
	// schedule now, as if it had just been created with the repeats not yet
	// done (missed ones included).
	MisfireRescheduleNowWithExistingRepeatCount MisfireInstruction = "RESCHEDULE_NOW_WITH_EXISTING_REPEAT_COUNT"
	// MisfireRescheduleNowWithRemainingRepeatCount restarts the simple
	// schedule now, counting the missed fire times as done.
	MisfireRescheduleNowWithRemainingRepeatCount MisfireInstruction = "RESCHEDULE_NOW_WITH_REMAINING_REPEAT_COUNT"
	// MisfireRescheduleNextWithRemainingCount waits for the next scheduled
	// time after now, counting the missed fire times as done.
	MisfireRescheduleNextWithRemainingCount MisfireInstruction = "RESCHEDULE_NEXT_WITH_REMAINING_COUNT"
	// MisfireRescheduleNextWithExistingCount waits for the next scheduled
	// time after now; the missed fire times are not counted.
	MisfireRescheduleNextWithExistingCount MisfireInstruction = "RESCHEDULE_NEXT_WITH_EXISTING_COUNT"
)

// MisfireInstructions lists every instruction, universal ones first.
func MisfireInstructions() []MisfireInstruction {
	return []MisfireInstruction{
		MisfireSmartPolicy,
		MisfireIgnore,
		MisfireFireOnceNow,
		MisfireDoNothing,
		MisfireFireNow,
		MisfireRescheduleNowWithExistingRepeatCount,
		MisfireRescheduleNowWithRemainingRepeatCount,
		MisfireRescheduleNextWithRemainingCount,
		MisfireRescheduleNextWithExistingCount,
	}
}

// orSmart maps the empty instruction to SMART_POLICY.
func (m MisfireInstruction) orSmart() MisfireInstruction {
	if m == "" {
		return MisfireSmartPolicy
	}
	return m
}

// universal reports whether the instruction applies to every kind.
func (m MisfireInstruction) universal() bool {
	return m == MisfireSmartPolicy || m == MisfireIgnore
}
