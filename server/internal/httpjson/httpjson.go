// Package httpjson reads and writes the JSON bodies of chime server's API:
// bounded request decoding that names the offending field, and the one error
// shape, api.Error, with the HTTP status of its code.
package httpjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

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
// bodies are refused with an *api.Error naming the problem and, where the
// decoder knows it, the field.
func Decode(w http.ResponseWriter, r *http.Request, maxBytes int64, v any) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBody
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return Errorf(api.CodeInvalidArgument, "", "Content-Type %q is not application/json", ct)
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, maxBytes)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return decodeError(err, maxBytes)
		}
		return Errorf(api.CodeInvalidArgument, "", "request body holds more than one JSON value")
	}
	return nil
}

// decodeError translates a decoding error into an *api.Error.
func decodeError(err error, maxBytes int64) *api.Error {
	var tooLarge *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &tooLarge):
		return Errorf(api.CodeTooLarge, "", "request body is larger than %d bytes", maxBytes)
	case errors.As(err, &typeErr):
		return Errorf(api.CodeInvalidArgument, typeErr.Field, "expected %s, got JSON %s", typeErr.Type, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return Errorf(api.CodeInvalidArgument, "", "malformed JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.Is(err, io.EOF):
		return Errorf(api.CodeInvalidArgument, "", "request body is empty")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Errorf(api.CodeInvalidArgument, "", "request body ends in the middle of a JSON value")
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return Errorf(api.CodeInvalidArgument, strings.Trim(field, `"`), "unknown field")
	}
	return Errorf(api.CodeInvalidArgument, "", "invalid JSON body: %v", err)
}
