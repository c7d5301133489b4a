package server

import (
	"strconv"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
)

// jobInvalid translates the library's refusal of a job write into the
// API's invalid_argument error, naming the field as the API's job object
// does ("triggers[2].schedule.expression"). The library validates jobs
// and triggers; the server does not check its rules again, it only
// renames the path. triggerAt maps the index of a trigger in the write to
// its index in the request; nil means they are the same.
func jobInvalid(ve *chime.ValidationError, triggerAt []int) *api.Error {
	return invalidf(jobField(ve.Steps(), triggerAt), "%s", ve.Problem())
}

// Scopes of a library path: what object its steps are fields of.
const (
	inJob = iota
	inTrigger
	inSchedule
)

// jobField spells a library path about a job write with the API's names.
// A step the API has no name for is kept as the library spells it.
func jobField(steps []chime.PathStep, triggerAt []int) string {
	var field string
	add := func(name string) {
		if field != "" && name != "" && name[0] != '[' {
			field += "."
		}
		field += name
	}
	scope := inJob
	for i := 0; i < len(steps); i++ {
		st := steps[i]
		if st.IsIndex {
			n := st.Index
			if i > 0 && steps[i-1].Name == "triggers" && n >= 0 && n < len(triggerAt) {
				n = triggerAt[n]
			}
			add("[" + strconv.Itoa(n) + "]")
			continue
		}
		switch {
		case scope == inSchedule:
			add(wire.ScheduleField(st.Name))
		case st.Name == "JobDetail" || st.Name == "Job":
			// The job of ScheduleJob or of an element of ScheduleJobs is
			// the API's job object itself.
			scope = inJob
		case st.Name == "jobs":
			add("jobs")
		case st.Name == "triggers":
			add("triggers")
			scope = inTrigger
		case st.Name == "Key":
			// A key's group and name are the job's group and the job's
			// or trigger's name.
			name := "name"
			if i+1 < len(steps) && steps[i+1].Name == "Group" {
				name = "group"
			}
			if i+1 < len(steps) && !steps[i+1].IsIndex {
				i++
			}
			add(name)
		case st.Name == "Schedule":
			add("schedule")
			scope = inSchedule
		default:
			add(apiName(st.Name))
		}
	}
	return field
}

// apiName is the API's name of a field of chime.JobDetail or
// chime.Trigger, or name itself when the API has none.
func apiName(name string) string {
	switch name {
	case "Type":
		return "type"
	case "Description":
		return "description"
	case "Data":
		return "data"
	case "Timeout":
		return "timeout"
	case "Priority":
		return "priority"
	case "StartTime":
		return "start_time"
	case "EndTime":
		return "end_time"
	case "CalendarName":
		return "calendar"
	case "MisfireInstruction":
		return "misfire"
	}
	return name
}
