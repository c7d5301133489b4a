package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

type body struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Items []item `json:"items,omitempty"`
}

type item struct {
	At     time.Time         `json:"at"`
	Labels map[string]*label `json:"labels,omitempty"`
}

type label struct {
	Value int `json:"value"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		body      string
		ctype     string
		wantCode  api.ErrorCode
		wantField string
	}{
		{name: "valid", body: `{"name":"a","count":2}`},
		{name: "unknown field", body: `{"name":"a","colour":"red"}`, wantCode: api.CodeInvalidArgument, wantField: "colour"},
		{name: "wrong type", body: `{"count":"two"}`, wantCode: api.CodeInvalidArgument, wantField: "count"},
		{name: "nested unknown field", body: `{"items":[{"at":"2025-01-01T00:00:00Z"},{"colour":"red"}]}`, wantCode: api.CodeInvalidArgument, wantField: "items[1].colour"},
		{name: "nested wrong type", body: `{"items":[{"labels":{"a":{"value":"x"}}}]}`, wantCode: api.CodeInvalidArgument, wantField: "items[0].labels.a.value"},
		{name: "time not a string", body: `{"items":[{"at":5}]}`, wantCode: api.CodeInvalidArgument, wantField: "items[0].at"},
		{name: "time malformed", body: `{"items":[{"at":"tomorrow"}]}`, wantCode: api.CodeInvalidArgument, wantField: "items[0].at"},
		{name: "field name in another case", body: `{"NAME":"a","Count":2}`},
		{name: "malformed", body: `{"name":`, wantCode: api.CodeInvalidArgument},
		{name: "empty", body: ``, wantCode: api.CodeInvalidArgument},
		{name: "two values", body: `{} {}`, wantCode: api.CodeInvalidArgument},
		{name: "too large", body: `{"name":"` + strings.Repeat("x", 100) + `"}`, wantCode: api.CodeTooLarge},
		{name: "not JSON content type", body: `{}`, ctype: "text/plain", wantCode: api.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tt.body))
			if tt.ctype != "" {
				r.Header.Set("Content-Type", tt.ctype)
			}
			var got body
			err := Decode(httptest.NewRecorder(), r, 64, &got)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if !reflect.DeepEqual(got, body{Name: "a", Count: 2}) {
					t.Fatalf("decoded %+v", got)
				}
				return
			}
			var apiErr *api.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("Decode error = %v, want *api.Error", err)
			}
			if apiErr.Code != tt.wantCode || apiErr.Field != tt.wantField || apiErr.Message == "" {
				t.Fatalf("Decode error = %+v, want code %s field %q and a message", apiErr, tt.wantCode, tt.wantField)
			}
		})
	}
}

func TestWriteError(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	r := httptest.NewRequest(http.MethodGet, "/api/v1/jobs", nil)

	w := httptest.NewRecorder()
	WriteError(w, r, log, Errorf(api.CodeNotFound, "", "job %s not found", "a.b"))
	assertError(t, w.Result(), http.StatusNotFound, api.CodeNotFound, "job a.b not found")

	w = httptest.NewRecorder()
	WriteError(w, r, log, errors.New("connection refused to 10.0.0.1"))
	assertError(t, w.Result(), http.StatusInternalServerError, api.CodeInternal, "internal error; the server log has the details")
	if !strings.Contains(logs.String(), "connection refused to 10.0.0.1") {
		t.Errorf("internal error not logged: %s", logs.String())
	}
}

func assertError(t *testing.T, resp *http.Response, status int, code api.ErrorCode, message string) {
	t.Helper()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Errorf("status = %d, want %d", resp.StatusCode, status)
	}
	var got api.Error
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("body %q: %v", raw, err)
	}
	if got.Code != code || got.Message != message {
		t.Errorf("body = %+v, want code %s message %q", got, code, message)
	}
}

func TestCheckJSONText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want string // a part of the error, "" for none
	}{
		{"plain", `{"a":"b"}`, ""},
		{"other escapes", `{"a":"\u0001\n\u00e9"}`, ""},
		{"NUL escape", `{"a":"x\u0000"}`, `NUL character (\u0000 at byte 7)`},
		{"escaped backslash, then text u0000", `{"a":"\\u0000"}`, ""},
		{"escaped backslash, then a NUL escape", `{"a":"\\\u0000"}`, "NUL character"},
		{"NUL in a key", `{"\u0000":1}`, "NUL character"},
		{"invalid UTF-8", "{\"a\":\"\xff\"}", "not valid UTF-8 (at byte 6)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := checkJSONText([]byte(tt.body))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("checkJSONText(%q) = %v, want nil", tt.body, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("checkJSONText(%q) = %v, want an error with %q", tt.body, err, tt.want)
			}
		})
	}
}
