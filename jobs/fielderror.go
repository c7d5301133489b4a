package jobs

// FieldError says which field of a job's spec is wrong and why. Field is
// the field's path in the spec's JSON form, such as "http.url",
// "http.headers.Authorization" or "shell.argv[0]", so the server can hand
// it back to whoever sent the spec.
type FieldError struct {
	// Field is the path of the bad field.
	Field string
	// Message says what is wrong with it.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Error returns "field: message".
func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Unwrap returns the underlying error.
func (e *FieldError) Unwrap() error { return e.Err }
