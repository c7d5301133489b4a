// Package httpjson reads and writes the JSON bodies of chime server's API:
// bounded request decoding that names the offending field, and the one error
// shape, api.Error, with the HTTP status of its code.
package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/chime-scheduler/chime/api"
)

// DefaultMaxBody is the request body limit Decode applies when given none.
const DefaultMaxBody = 1 << 20

// Status returns the HTTP status of an error code.
func Status(code api.ErrorCode) int {
	switch code {
	case api.CodeInvalidArgument:
		return http.StatusBadRequest
	case api.CodeUnauthenticated:
		return http.StatusUnauthorized
	case api.CodePermissionDenied:
		return http.StatusForbidden
	case api.CodeNotFound:
		return http.StatusNotFound
	case api.CodeConflict:
		return http.StatusConflict
	case api.CodeVersionMismatch:
		return http.StatusPreconditionFailed
	case api.CodeTooLarge:
		return http.StatusRequestEntityTooLarge
	case api.CodeRateLimited:
		return http.StatusTooManyRequests
	case api.CodeUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// Errorf returns an *api.Error with a formatted message.
func Errorf(code api.ErrorCode, field, format string, args ...any) *api.Error {
	return &api.Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Write writes v as JSON with the given status.
func Write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away; nothing to tell it
}

// WriteError writes err as an api.Error. An error that is not (and does
// not wrap) an *api.Error is an internal error: it is logged with the
// request, and the client sees only that something failed, so internals do
// not leak.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	var apiErr *api.Error
	if !errors.As(err, &apiErr) {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "error", err)
		apiErr = &api.Error{Code: api.CodeInternal, Message: "internal error; the server log has the details"}
	}
	Write(w, Status(apiErr.Code), apiErr)
}

// Decode reads a JSON request body of at most maxBytes (DefaultMaxBody when
// zero) into v. Unknown fields, wrong types, trailing data and oversized
// bodies are refused with an *api.Error naming the problem and the field
// to blame, as a dotted path with indices ("triggers[0].start_time"), when
// one is.
func Decode(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) error {
	_, err := decode(w, r, maxBytes, v)
	return err
}

// DecodeKeys is Decode for a body that is a JSON object: it also returns
// the names of the object's fields, null ones included, so that a caller
// can tell a field left out from one given its zero value.
func DecodeKeys(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) ([]string, error) {
	data, err := decode(w, r, maxBytes, v)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, Errorf(api.CodeInvalidArgument, "", "request body must be a JSON object")
	}
	return slices.Sorted(maps.Keys(fields)), nil
}

// decode does Decode's work, returning the body it read.
func decode(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBody
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return nil, Errorf(api.CodeInvalidArgument, "", "Content-Type %q is not application/json", ct)
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		return nil, decodeError(err, maxBytes, nil, nil)
	}
	if err := checkJSONText(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, decodeError(err, maxBytes, data, reflect.TypeOf(v))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, decodeError(err, maxBytes, nil, nil)
		}
		return nil, Errorf(api.CodeInvalidArgument, "", "request body holds more than one JSON value")
	}
	return data, nil
}

// CheckText refuses text that no database can store or that would be
// changed silently on the way: invalid UTF-8 (which encoding/json would
// replace with U+FFFD) and the NUL character (which PostgreSQL refuses in
// text). what names the text in the error ("the job group in the path").
func CheckText(field, what, v string) error {
	if !utf8.ValidString(v) {
		return Errorf(api.CodeInvalidArgument, field, "%s is not valid UTF-8", what)
	}
	if strings.IndexByte(v, 0) >= 0 {
		return Errorf(api.CodeInvalidArgument, field, "%s contains the NUL character, which cannot be stored", what)
	}
	return nil
}

// checkJSONText refuses a JSON body that is not valid UTF-8, or that holds
// the NUL character (as the escape \u0000: JSON has no raw control
// characters), before decoding: see CheckText.
func checkJSONText(data []byte) error {
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return Errorf(api.CodeInvalidArgument, "", "request body is not valid UTF-8 (at byte %d)", off)
	}
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(`\u0000`))
		if j < 0 {
			return nil
		}
		at := i + j
		// The escape is a NUL unless its backslash is itself escaped:
		// an odd run of backslashes ends in an escaping one.
		run := 0
		for k := at; k >= 0 && data[k] == '\\'; k-- {
			run++
		}
		if run%2 == 1 {
			return Errorf(api.CodeInvalidArgument, "", "request body contains the NUL character (\\u0000 at byte %d), which cannot be stored", at)
		}
		i = at + 1
	}
}

// decodeError translates a decoding error into an *api.Error. For errors
// about one value, it finds that value's path in data, decoded as t.
func decodeError(err error, maxBytes int64, data []byte, t reflect.Type) *api.Error {
	var tooLarge *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &tooLarge):
		return Errorf(api.CodeTooLarge, "", "request body is larger than %d bytes", maxBytes)
	case errors.As(err, &syntaxErr):
		return Errorf(api.CodeInvalidArgument, "", "malformed JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.Is(err, io.EOF):
		return Errorf(api.CodeInvalidArgument, "", "request body is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Errorf(api.CodeInvalidArgument, "", "request body ends in the middle of a JSON value")
	}
	field := ""
	if t != nil {
		field = fieldPath(data, t)
	}
	switch {
	case errors.As(err, &typeErr):
		if field == "" {
			field = typeErr.Field
		}
		return Errorf(api.CodeInvalidArgument, field, "expected %s, got JSON %s", typeErr.Type, typeErr.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return Errorf(api.CodeInvalidArgument, field, "unknown field")
	case field != "":
		return Errorf(api.CodeInvalidArgument, field, "invalid value: %v", err)
	}
	return Errorf(api.CodeInvalidArgument, "", "invalid JSON body: %v", err)
}

// fieldPath finds the value in data that fails to decode as t (unknown
// fields included), and returns its path: object keys joined with dots,
// array indices in brackets ("triggers[0].start_time"). It returns "" when
// the whole body is to blame or every part decodes. It re-decodes parts of
// data, so it is only for the error path; it recurses no deeper than t.
func fieldPath(data []byte, t reflect.Type) string {
	return locate(data, t, "")
}

func locate(data []byte, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if decodesStrictly(data, t) {
		return ""
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return path
	}
	switch t.Kind() {
	case reflect.Struct:
		var fields map[string]json.RawMessage
		if json.Unmarshal(data, &fields) != nil {
			return path
		}
		for _, key := range slices.Sorted(maps.Keys(fields)) {
			f, ok := jsonField(t, key)
			if !ok {
				return joinPath(path, key)
			}
			if p := locate(fields[key], f.Type, joinPath(path, key)); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		var elems []json.RawMessage
		if t.Elem().Kind() == reflect.Uint8 || json.Unmarshal(data, &elems) != nil {
			return path
		}
		for i, e := range elems {
			if p := locate(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		var entries map[string]json.RawMessage
		if json.Unmarshal(data, &entries) != nil {
			return path
		}
		for _, key := range slices.Sorted(maps.Keys(entries)) {
			if p := locate(entries[key], t.Elem(), joinPath(path, key)); p != "" {
				return p
			}
		}
	}
	return path
}

// decodesStrictly reports whether data decodes as t without unknown fields.
func decodesStrictly(data []byte, t reflect.Type) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(reflect.New(t).Interface()) == nil
}

// jsonField finds the struct field encoding/json decodes key into: the
// exact name first, then one equal under case folding, as it does.
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	var folded *reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || (f.Anonymous && f.Type.Kind() == reflect.Struct) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case name == "":
			name = f.Name
		}
		if name == key {
			return f, true
		}
		if folded == nil && strings.EqualFold(name, key) {
			folded = &f
		}
	}
	if folded != nil {
		return *folded, true
	}
	return reflect.StructField{}, false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
