package jobversion

// RecordedAlone returns how many versions v stored with one statement.
func (v *Versions) RecordedAlone() int64 { return v.recordedAlone.Load() }
