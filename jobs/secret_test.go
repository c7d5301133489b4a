package jobs_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/jobs"
)

// secretsOf returns a lookup over a map, counting the reads.
func secretsOf(values map[string]string, reads *int) jobs.SecretLookup {
	return func(name string) (string, error) {
		*reads++
		v, ok := values[name]
		if !ok {
			return "", fmt.Errorf("secret %q is not defined", name)
		}
		return v, nil
	}
}

func TestExpandSecret(t *testing.T) {
	t.Parallel()
	reads := 0
	v := testVars()
	v.Secrets = secretsOf(map[string]string{"tok": "abc/def ?&"}, &reads)

	got, err := jobs.Expand("http.headers.Authorization", `Bearer {{secret "tok"}}`, v)
	if err != nil || got != "Bearer abc/def ?&" {
		t.Errorf("Expand = %q, %v; want the secret's value", got, err)
	}
	got, err = jobs.ExpandURL("http.url", `https://api.example.com/{{secret "tok"}}?t={{secret "tok"}}`, v)
	if want := "https://api.example.com/abc%2Fdef%20%3F&?t=abc%2Fdef+%3F%26"; err != nil || got != want {
		t.Errorf("ExpandURL = %q, %v; want %q, escaped for each part", got, err, want)
	}
	if reads != 3 {
		t.Errorf("the lookup was called %d times, want 3", reads)
	}

	_, err = jobs.Expand("http.body", `{{secret "missing"}}`, v)
	var fe *jobs.FieldError
	var se *jobs.SecretError
	if !errors.As(err, &fe) || fe.Field != "http.body" || fe.Message != `secret "missing" is not defined` || !errors.As(err, &se) || se.Name != "missing" {
		t.Errorf("Expand of an undefined secret: %v; want a FieldError of http.body saying secret \"missing\" is not defined", err)
	}

	v.Secrets = nil
	if _, err := jobs.Expand("shell.env.TOKEN", `{{secret "tok"}}`, v); !errors.Is(err, jobs.ErrNoSecrets) {
		t.Errorf("Expand without a lookup: %v, want ErrNoSecrets", err)
	}
}

func TestSecretNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"no template", nil},
		{`{{.JobName}}`, nil},
		{`Bearer {{secret "b"}} {{secret "a"}} {{secret "b"}}`, []string{"a", "b"}},
		{`{{if .Params.x}}{{secret "in-if"}}{{else}}{{printf "%s" (secret "in-else")}}{{end}}`, []string{"in-else", "in-if"}},
		{`{{with secret "in-with"}}{{.}}{{end}}`, []string{"in-with"}},
		{`{{secret "piped" | printf "%q"}}`, []string{"piped"}},
	} {
		got, err := jobs.SecretNames("f", tc.text)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("SecretNames(%q) = %q, %v; want %q", tc.text, got, err, tc.want)
		}
	}
}

// TestSecretNeedsAQuotedName refuses a secret name computed at firing
// time, when the job is saved.
func TestSecretNeedsAQuotedName(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		`{{secret .Params.name}}`,
		`{{secret}}`,
		`{{secret "a" "b"}}`,
		`{{printf "%s" secret}}`,
		`{{.Params.name | secret}}`,
	} {
		err := jobs.CheckTemplate("http.body", text)
		var fe *jobs.FieldError
		if !errors.As(err, &fe) || fe.Field != "http.body" || !strings.Contains(fe.Message, `secret takes one quoted name`) {
			t.Errorf("CheckTemplate(%q) = %v, want a FieldError saying secret takes one quoted name", text, err)
		}
	}
	if err := jobs.CheckTemplate("http.body", `{{secret "ok"}}`); err != nil {
		t.Errorf("CheckTemplate of a quoted name: %v", err)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	values := []string{"s3cr3t/value", "ab", ""}
	for _, tc := range []struct {
		name, in  string
		truncated bool
		want      string
	}{
		{"raw", "token=s3cr3t/value end", false, "token=**** end"},
		{"query escaped", "GET /x?t=s3cr3t%2Fvalue", false, "GET /x?t=****"},
		{"path escaped", "GET /x/s3cr3t%2Fvalue/y", false, "GET /x/****/y"},
		{"short value", "grab a cab", false, "gr**** a c****"},
		{"cut inside a value", "echo s3cr3t/va", true, "echo ****"},
		{"not cut", "echo s3cr3t/va", false, "echo s3cr3t/va"},
		{"nothing", "plain", true, "plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := jobs.Redact(tc.in, values, tc.truncated); got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	c := jobs.NewCapture(10)
	fmt.Fprint(c, "xx s3cr3t/value")
	c.Redact(values)
	if got := c.String(); got != "xx ****" {
		t.Errorf("Capture after Redact = %q, want %q", got, "xx ****")
	}
}
