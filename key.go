package chime

import "github.com/chime-scheduler/chime/store"

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
