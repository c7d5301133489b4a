package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/httpjob"
	"github.com/chime-scheduler/chime/jobs/shelljob"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/secret"
)

// ListSecrets returns every secret, by name, with the jobs that use it;
// never a value.
func (s *Server) ListSecrets(ctx context.Context) ([]api.Secret, error) {
	list, err := s.secrets.List(ctx)
	if err != nil {
		return nil, err
	}
	users, err := s.secretUsers(ctx)
	if err != nil {
		return nil, err
	}
	for i := range list {
		list[i].UsedBy = users[list[i].Name]
	}
	return list, nil
}

// GetSecret returns one secret with the jobs that use it; never its value.
func (s *Server) GetSecret(ctx context.Context, name string) (*api.Secret, error) {
	sec, err := s.secrets.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	users, err := s.secretUsers(ctx)
	if err != nil {
		return nil, err
	}
	sec.UsedBy = users[name]
	return sec, nil
}

// PutSecret sets a secret's value, encrypted with the server's key, and
// reports whether it created the secret. Firings read the new value from
// then on.
func (s *Server) PutSecret(ctx context.Context, actor, name, value string) (*api.Secret, bool, error) {
	sec, created, err := s.secrets.Set(ctx, actor, name, value)
	if err != nil {
		return nil, false, err
	}
	users, err := s.secretUsers(ctx)
	if err != nil {
		return nil, false, err
	}
	sec.UsedBy = users[name]
	return sec, created, nil
}

// DeleteSecret deletes a secret; conflict while a job or the alert
// settings refer to it.
func (s *Server) DeleteSecret(ctx context.Context, actor, name string) error {
	if err := secret.ValidateName("name", name); err != nil {
		return err
	}
	users, err := s.secretUsers(ctx)
	if err != nil {
		return err
	}
	if u := users[name]; len(u) > 0 {
		return httpjson.Errorf(api.CodeConflict, "", "secret %q is used by %s; remove the references first", name, strings.Join(u, ", "))
	}
	return s.secrets.Delete(ctx, actor, name)
}

// alertsSecretUser names the global alert settings among a secret's users.
const alertsSecretUser = "alert settings"

// secretUsers returns, by secret name, the jobs ("group/name") and alert
// settings that refer to it, sorted.
func (s *Server) secretUsers(ctx context.Context) (map[string][]string, error) {
	out := make(map[string][]string)
	err := s.eachJob(ctx, "", chime.MaxJobPageLimit, func(d *chime.JobDetail) error {
		st, err := settingsOf(d)
		if err != nil {
			return nil //nolint:nilerr // a job the server cannot read refers to nothing it can tell
		}
		refs, _ := secretRefs(st)
		for name := range refs {
			out[name] = append(out[name], d.Key.Group+"/"+d.Key.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if st, err := s.alerts.settings(ctx); err == nil {
		texts := slices.Concat(st.DefaultWebhooks, st.DefaultSlack, st.DefaultTeams)
		for _, t := range st.DefaultPagerDuty {
			texts = append(texts, t.RoutingKey)
		}
		for _, u := range texts {
			names, _ := jobs.SecretNames("default_webhooks", u)
			for _, name := range names {
				if !slices.Contains(out[name], alertsSecretUser) {
					out[name] = append(out[name], alertsSecretUser)
				}
			}
		}
	}
	for name := range out {
		slices.Sort(out[name])
	}
	return out, nil
}

// secretRefs returns the secrets a job's settings refer to, each with the
// first field (in the order of the spec) that does. Fields whose
// templates do not parse are skipped, and the first such error returned.
func secretRefs(st jobSettings) (map[string]string, error) {
	refs := make(map[string]string)
	var firstErr error
	add := func(field, text string) {
		names, err := jobs.SecretNames(field, text)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, n := range names {
			if _, ok := refs[n]; !ok {
				refs[n] = field
			}
		}
	}
	if len(st.HTTP) > 0 {
		var spec httpjob.Spec
		if err := json.Unmarshal(st.HTTP, &spec); err == nil {
			add("http.url", spec.URL)
			for _, h := range slices.Sorted(maps.Keys(spec.Headers)) {
				add("http.headers."+h, spec.Headers[h])
			}
			add("http.body", spec.Body)
		}
	}
	if len(st.Shell) > 0 {
		var spec shelljob.Spec
		if err := json.Unmarshal(st.Shell, &spec); err == nil {
			for i, a := range spec.Argv {
				add("shell.argv["+strconv.Itoa(i)+"]", a)
			}
			for _, e := range slices.Sorted(maps.Keys(spec.Env)) {
				add("shell.env."+e, spec.Env[e])
			}
		}
	}
	if a := st.Alerts; a != nil {
		for i, u := range a.Webhooks {
			add("alerts.webhooks["+strconv.Itoa(i)+"]", u)
		}
		for i, u := range a.Slack {
			add("alerts.slack["+strconv.Itoa(i)+"]", u)
		}
		for i, u := range a.Teams {
			add("alerts.teams["+strconv.Itoa(i)+"]", u)
		}
		for i, t := range a.PagerDuty {
			add("alerts.pagerduty["+strconv.Itoa(i)+"].routing_key", t.RoutingKey)
		}
	}
	return refs, firstErr
}

// checkSecretRefs refuses job settings that refer to a secret that does
// not exist, or that hold a value a viewer read masked (written back, it
// would replace the real one), naming the field.
func (s *Server) checkSecretRefs(ctx context.Context, st jobSettings) error {
	if err := checkNotMasked(st); err != nil {
		return err
	}
	refs, err := secretRefs(st)
	if err != nil {
		return fieldErr("", err)
	}
	return s.checkSecretsExist(ctx, refs)
}

// checkSecretsExist refuses references (secret name → field) to secrets
// that do not exist, naming the first field in field order.
func (s *Server) checkSecretsExist(ctx context.Context, refs map[string]string) error {
	if len(refs) == 0 {
		return nil
	}
	list, err := s.secrets.List(ctx)
	if err != nil {
		return err
	}
	defined := make(map[string]bool, len(list))
	for _, sec := range list {
		defined[sec.Name] = true
	}
	var missing []string
	for name := range refs {
		if !defined[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.SortFunc(missing, func(a, b string) int { return strings.Compare(refs[a]+"\x00"+a, refs[b]+"\x00"+b) })
	name := missing[0]
	return invalidf(refs[name], "secret %q is not defined; an admin sets it with `chime secrets set %s` or PUT %s/secrets/%s",
		name, name, api.Version, name)
}

// checkNotMasked refuses settings that hold the mask a viewer reads in
// place of a sensitive value.
func checkNotMasked(st jobSettings) error {
	masked := func(field string) error {
		return invalidf(field, "holds %q, the mask a viewer reads in place of a sensitive value, not a value: "+
			`write the real value or, better, {{secret "name"}}`, secret.Mask)
	}
	if len(st.HTTP) > 0 {
		var spec httpjob.Spec
		if json.Unmarshal(st.HTTP, &spec) == nil {
			if strings.Contains(spec.URL, "="+secret.Mask) || strings.Contains(spec.URL, secret.Mask+"@") {
				return masked("http.url")
			}
			for _, h := range slices.Sorted(maps.Keys(spec.Headers)) {
				if spec.Headers[h] == secret.Mask {
					return masked("http.headers." + h)
				}
			}
		}
	}
	if len(st.Shell) > 0 {
		var spec shelljob.Spec
		if json.Unmarshal(st.Shell, &spec) == nil {
			for _, e := range slices.Sorted(maps.Keys(spec.Env)) {
				if spec.Env[e] == secret.Mask {
					return masked("shell.env." + e)
				}
			}
		}
	}
	if a := st.Alerts; a != nil {
		for _, list := range []struct {
			field string
			urls  []string
		}{{"alerts.webhooks", a.Webhooks}, {"alerts.slack", a.Slack}, {"alerts.teams", a.Teams}} {
			for i, u := range list.urls {
				if strings.Contains(u, secret.Mask) {
					return masked(list.field + "[" + strconv.Itoa(i) + "]")
				}
			}
		}
		for i, t := range a.PagerDuty {
			if strings.Contains(t.RoutingKey, secret.Mask) {
				return masked("alerts.pagerduty[" + strconv.Itoa(i) + "].routing_key")
			}
		}
	}
	return nil
}

// secretUse reads the secrets of one firing (or one alert delivery), each
// once, and remembers their values so that they can be masked in what is
// recorded.
type secretUse struct {
	ctx     context.Context
	secrets *secret.Service

	mu     sync.Mutex
	values map[string]string
}

// newSecretUse returns a secretUse reading with ctx.
func (s *Server) newSecretUse(ctx context.Context) *secretUse {
	return &secretUse{ctx: ctx, secrets: s.secrets, values: make(map[string]string)}
}

// lookup is the jobs.SecretLookup of the firing.
func (u *secretUse) lookup(name string) (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if v, ok := u.values[name]; ok {
		return v, nil
	}
	v, err := u.secrets.Value(u.ctx, name)
	if err != nil {
		return "", err
	}
	u.values[name] = v
	return v, nil
}

// used returns the values read so far.
func (u *secretUse) used() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Collect(maps.Values(u.values))
}

// redact masks the values read in out and err, once the job has run.
func (u *secretUse) redact(out *jobs.Capture, err error) error {
	values := u.used()
	if len(values) == 0 {
		return err
	}
	out.Redact(values)
	if err == nil {
		return nil
	}
	msg := jobs.Redact(err.Error(), values, false)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// redactedError is an error whose message had secrets masked; it still
// wraps the original for errors.Is and errors.As.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// expandWebhook is the alert notifier's Expand: it expands the {{secret}}
// references of a webhook URL, header value or PagerDuty routing key
// before each delivery.
func (s *Server) expandWebhook(ctx context.Context, field, text string) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	vars := jobs.Vars{Secrets: s.newSecretUse(ctx).lookup}
	var out string
	var err error
	if field == "url" {
		out, err = jobs.ExpandURL(field, text, vars)
	} else {
		out, err = jobs.Expand(field, text, vars)
	}
	if err != nil {
		if se, ok := errors.AsType[*jobs.SecretError](err); ok {
			return "", fmt.Errorf("webhook %s: %w", field, se)
		}
		return "", fmt.Errorf("webhook %s: %w", field, err)
	}
	return out, nil
}
