package jobs

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DecodeJSON decodes data, a JSON object, into v, a pointer to a struct,
// and refuses keys v has no field for, so that a misspelt option is an
// error rather than silently ignored. Keys match field names exactly, not
// case-insensitively. Errors are *FieldError values whose Field is
// section followed by the path of the bad key, such as "http.timeout".
func DecodeJSON(data []byte, section string, v any) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return &FieldError{Field: section, Message: "must be a JSON object", Err: err}
	}
	known := jsonKeys(reflect.TypeOf(v).Elem())
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !known[k] {
			return &FieldError{Field: section + "." + k, Message: "unknown field"}
		}
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return &FieldError{
				Field:   section + "." + te.Field,
				Message: "got JSON " + te.Value + ", want " + describe(te.Type),
				Err:     err,
			}
		}
		return &FieldError{Field: section, Message: err.Error(), Err: err}
	}
	return nil
}

// ParseDuration parses s, a Go duration such as "30s" or "1m30s", for the
// spec field named field. An empty s is zero.
func ParseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, &FieldError{
			Field:   field,
			Message: "invalid duration " + strconv.Quote(s) + ` (want a Go duration such as "30s" or "1m30s")`,
			Err:     err,
		}
	}
	return d, nil
}

// FormatDuration formats d as ParseDuration reads it, without zero
// trailing units ("10m", not "10m0s"); zero is "".
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// jsonKeys returns the JSON object keys encoding/json decodes into struct
// type t, following embedded structs.
func jsonKeys(t reflect.Type) map[string]bool {
	keys := make(map[string]bool)
	addJSONKeys(keys, t)
	return keys
}

func addJSONKeys(keys map[string]bool, t reflect.Type) {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case tag == "-":
		case f.Anonymous && name == "" && ft.Kind() == reflect.Struct:
			addJSONKeys(keys, ft)
		case !f.IsExported():
		case name == "":
			keys[f.Name] = true
		default:
			keys[name] = true
		}
	}
}

// describe names the JSON form of a Go type, for error messages.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}
