package chime

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chime-scheduler/chime/store"
)

// DefaultGroup is the group of a key whose group is left empty.
const DefaultGroup = "DEFAULT"

// JobKey identifies a job: a name within a group.
type JobKey struct {
	Group string
	Name  string
}

// NewJobKey returns the key of job name in group; an empty group means
// DefaultGroup.
func NewJobKey(group, name string) JobKey {
	return JobKey{Group: groupOrDefault(group), Name: name}
}

// String returns "group.name".
func (k JobKey) String() string { return k.Group + "." + k.Name }

// TriggerKey identifies a trigger: a name within a group.
type TriggerKey struct {
	Group string
	Name  string
}

// NewTriggerKey returns the key of trigger name in group; an empty group
// means DefaultGroup.
func NewTriggerKey(group, name string) TriggerKey {
	return TriggerKey{Group: groupOrDefault(group), Name: name}
}

// String returns "group.name".
func (k TriggerKey) String() string { return k.Group + "." + k.Name }

func groupOrDefault(group string) string {
	if group == "" {
		return DefaultGroup
	}
	return group
}

func (k JobKey) normalized() JobKey         { return NewJobKey(k.Group, k.Name) }
func (k TriggerKey) normalized() TriggerKey { return NewTriggerKey(k.Group, k.Name) }
func (k JobKey) store() store.Key           { return store.Key{Group: groupOrDefault(k.Group), Name: k.Name} }
func (k TriggerKey) store() store.Key       { return store.Key{Group: groupOrDefault(k.Group), Name: k.Name} }
func jobKeyOf(k store.Key) JobKey           { return JobKey{Group: k.Group, Name: k.Name} }
func triggerKeyOf(k store.Key) TriggerKey   { return TriggerKey{Group: k.Group, Name: k.Name} }

// Matcher selects job or trigger keys for a listener. A nil Matcher selects
// every key.
type Matcher[K JobKey | TriggerKey] func(key K) bool

// KeyEquals matches one key.
func KeyEquals[K JobKey | TriggerKey](key K) Matcher[K] {
	return func(k K) bool { return k == key }
}

// GroupEquals matches every key of one group.
func GroupEquals[K JobKey | TriggerKey](group string) Matcher[K] {
	group = groupOrDefault(group)
	return func(k K) bool { return groupOfKey(k) == group }
}

// Or matches a key that any of the matchers matches.
func Or[K JobKey | TriggerKey](matchers ...Matcher[K]) Matcher[K] {
	return func(k K) bool {
		for _, m := range matchers {
			if m.Match(k) {
				return true
			}
		}
		return false
	}
}

// Match reports whether the matcher selects key; a nil matcher selects
// every key.
func (m Matcher[K]) Match(key K) bool { return m == nil || m(key) }

func groupOfKey[K JobKey | TriggerKey](k K) string {
	switch k := any(k).(type) {
	case JobKey:
		return k.Group
	case TriggerKey:
		return k.Group
	}
	return ""
}

// MaxKeyLength is the most characters (Unicode code points) that the group
// or the name of a key, a job type, a calendar name and a node ID may have:
// as many as every store keeps.
const MaxKeyLength = 200

// EarliestTime returns the earliest instant a trigger may hold as its start,
// end or fire time, 1677-09-21T00:12:43.145224192Z: stores keep instants
// as 64-bit Unix nanoseconds.
func EarliestTime() time.Time { return time.Unix(0, math.MinInt64).UTC() }

// LatestTime returns the latest instant a trigger may hold as its start,
// end or fire time, 2262-04-11T23:47:16.854775807Z.
func LatestTime() time.Time { return time.Unix(0, math.MaxInt64).UTC() }

// checkText refuses a string that no store can keep: one that is not
// valid UTF-8 or holds the NUL character (PostgreSQL and MySQL refuse
// both), or, when limit is positive, one of more than limit characters.
func checkText(field, v string, limit int) error {
	switch {
	case !utf8.ValidString(v):
		return &ValidationError{Field: field, Reason: "is not valid UTF-8"}
	case strings.IndexByte(v, 0) >= 0:
		return &ValidationError{Field: field, Reason: "contains the NUL character"}
	case limit > 0 && utf8.RuneCountInString(v) > limit:
		return &ValidationError{Field: field, Reason: fmt.Sprintf("is %d characters long; at most %d are allowed", utf8.RuneCountInString(v), limit)}
	}
	return nil
}

// CheckName refuses a string that no store can keep as the group or name
// of a key, a job type, a calendar name or a node ID: one that is not
// valid UTF-8, holds the NUL character, or has more than MaxKeyLength
// characters. The error is a *ValidationError about field. The empty
// string passes: where a name is required, the caller says so.
func CheckName(field, v string) error {
	return checkText(field, v, MaxKeyLength)
}

// checkKey refuses a key whose group or name no store can keep.
func checkKey(field string, k store.Key) error {
	if err := CheckName(field+".Group", k.Group); err != nil {
		return err
	}
	return CheckName(field+".Name", k.Name)
}

// checkInstant refuses an instant outside EarliestTime to LatestTime; the
// zero time, which means none, passes.
func checkInstant(field string, t time.Time) error {
	if t.IsZero() || (!t.Before(EarliestTime()) && !t.After(LatestTime())) {
		return nil
	}
	return &ValidationError{Field: field, Reason: fmt.Sprintf("%s is outside %s to %s, the instants stores keep",
		t.Format(time.RFC3339Nano), EarliestTime().Format(time.RFC3339Nano), LatestTime().Format(time.RFC3339Nano))}
}
