package chime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"time"
)

// JobData is a job's or a trigger's data map. It is stored as a JSON object,
// so values must be JSON-encodable; after a round trip through a store,
// numbers come back as json.Number and times as RFC 3339 strings. The typed
// accessors read either form.
type JobData map[string]any

// String returns the value of key when it is a string.
func (d JobData) String(key string) (string, bool) {
	s, ok := d[key].(string)
	return s, ok
}

// Int returns the value of key when it is an integral number.
func (d JobData) Int(key string) (int64, bool) {
	switch v := d[key].(type) {
	case int:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case json.Number:
		i, err := v.Int64()
		return i, err == nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), true
		}
	}
	return 0, false
}

// Float returns the value of key when it is a number.
func (d JobData) Float(key string) (float64, bool) {
	switch v := d[key].(type) {
	case float64:
		return v, true
	case float32:
		return float64(v), true
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	}
	return 0, false
}

// Bool returns the value of key when it is a boolean.
func (d JobData) Bool(key string) (bool, bool) {
	b, ok := d[key].(bool)
	return b, ok
}

// Time returns the value of key when it is a time.Time or an RFC 3339
// string.
func (d JobData) Time(key string) (time.Time, bool) {
	switch v := d[key].(type) {
	case time.Time:
		return v, true
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		return t, err == nil
	}
	return time.Time{}, false
}

// Decode stores the data map into v, a pointer to a struct or map, through
// JSON.
func (d JobData) Decode(v any) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("chime: encode job data: %w", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("chime: decode job data into %T: %w", v, err)
	}
	return nil
}

// Clone returns a shallow copy of d.
func (d JobData) Clone() JobData {
	if d == nil {
		return nil
	}
	return maps.Clone(d)
}

// merge returns d overlaid by other.
func (d JobData) merge(other JobData) JobData {
	out := make(JobData, len(d)+len(other))
	maps.Copy(out, d)
	maps.Copy(out, other)
	return out
}

func encodeJobData(d JobData) ([]byte, error) {
	if len(d) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("job data is not JSON-encodable: %w", err)
	}
	return raw, nil
}

func decodeJobData(raw []byte) (JobData, error) {
	if len(raw) == 0 {
		return JobData{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	d := JobData{}
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("decode job data: %w", err)
	}
	return d, nil
}
