package secret

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs"
)

// Mask is what a viewer reads in place of a masked value.
const Mask = jobs.Mask

// sensitiveWords are the parts of a header's or variable's name that
// suggest its value is a credential.
var sensitiveWords = []string{"auth", "cookie", "token", "key", "secret", "password", "passwd", "pwd", "credential", "session", "signature"}

// SensitiveName reports whether a header's or environment variable's name
// suggests its value is a credential: Authorization, Cookie, X-Api-Key,
// DB_PASSWORD and any name containing auth, cookie, token, key, secret,
// password, passwd, pwd, credential, session or signature, in any case.
func SensitiveName(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range sensitiveWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// authSchemes are the literal texts a sensitive value may hold around its
// template actions and still be shown: an authentication scheme.
var authSchemes = []string{"", "basic", "bearer", "digest", "token", "apikey", "bot"}

// MaskValue returns the value of a sensitive header or variable as a
// viewer reads it: unchanged when it is a template whose literal text is
// at most an authentication scheme, such as `Bearer {{secret "tok"}}`
// (its actions read secrets or parameters, which hold no credential of
// their own), and Mask otherwise.
func MaskValue(value string) string {
	if !strings.Contains(value, "{{") {
		return Mask
	}
	var literal strings.Builder
	rest := value
	for {
		before, after, ok := strings.Cut(rest, "{{")
		literal.WriteString(before)
		if !ok {
			break
		}
		action, after, ok := strings.Cut(after, "}}")
		if !ok || quotesText(action) {
			// Not a template that parses, or an action with text of its
			// own, such as {{"literal token"}}: show nothing.
			return Mask
		}
		rest = after
	}
	scheme := strings.ToLower(strings.TrimSpace(literal.String()))
	for _, s := range authSchemes {
		if scheme == s {
			return value
		}
	}
	return Mask
}

// quotesText reports whether a template action holds a quoted string
// other than the name of a {{secret "name"}} call.
func quotesText(action string) bool {
	rest := action
	for {
		before, after, ok := strings.Cut(rest, "secret \"")
		if strings.ContainsAny(before, "\"`") {
			return true
		}
		if !ok {
			return false
		}
		_, rest, ok = strings.Cut(after, "\"")
		if !ok {
			return true
		}
	}
}

// MaskURL returns a webhook URL as a viewer reads it: its scheme and host,
// with Mask in place of its user info, and of its path, query and
// fragment when it has any, which for chat webhooks hold the secret
// ("https://hooks.slack.com/****"). A URL that does not parse is Mask.
func MaskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || strings.Contains(u.Host, "{{") {
		return Mask
	}
	out := u.Scheme + "://"
	if u.User != nil {
		out += Mask + "@"
	}
	out += u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		out += "/" + Mask
	}
	return out
}

// MaskRequestURL returns an http job's URL (or URL template) as a viewer
// reads it: the user info and the values of query parameters whose names
// look sensitive (SensitiveName, such as api_key or token) masked by
// MaskValue, the rest as written, so that a viewer still sees where the
// job goes: "https://api.example.com/v1/items?api_key=****&page=2".
func MaskRequestURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		scheme, rest = "", raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		rest = Mask + rest[at:]
	}
	before, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery {
		query, fragment, hasFragment := strings.Cut(query, "#")
		params := strings.Split(query, "&")
		for i, p := range params {
			if k, v, ok := strings.Cut(p, "="); ok && v != "" && SensitiveName(k) {
				params[i] = k + "=" + MaskValue(v)
			}
		}
		rest = before + "?" + strings.Join(params, "&")
		if hasFragment {
			rest += "#" + fragment
		}
	}
	if !ok {
		return rest
	}
	return scheme + "://" + rest
}

// MaskJob returns j as a viewer reads it: the values of its sensitive HTTP
// headers and shell environment variables masked by MaskValue, its URL by
// MaskRequestURL, its alert webhooks (generic, Slack and Teams) by MaskURL
// and its PagerDuty routing keys by MaskValue. A spec that does not
// decode is left out whole rather than shown.
func MaskJob(j api.Job) api.Job {
	j.HTTP = maskSpecURL(maskSpecMap(j.HTTP, "headers"))
	j.Shell = maskSpecMap(j.Shell, "env")
	if j.Alerts != nil {
		a := *j.Alerts
		a.Webhooks = maskURLs(a.Webhooks)
		a.Slack = maskURLs(a.Slack)
		a.Teams = maskURLs(a.Teams)
		if len(a.PagerDuty) > 0 {
			a.PagerDuty = make([]api.PagerDutyTarget, len(j.Alerts.PagerDuty))
			for i, t := range j.Alerts.PagerDuty {
				a.PagerDuty[i] = api.PagerDutyTarget{RoutingKey: MaskValue(t.RoutingKey), Severity: t.Severity}
			}
		}
		j.Alerts = &a
	}
	return j
}

// maskURLs returns urls masked by MaskURL, in a new slice.
func maskURLs(urls []string) []string {
	if len(urls) == 0 {
		return urls
	}
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = MaskURL(u)
	}
	return out
}

// maskSpecURL masks the "url" of an http spec's JSON object.
func maskSpecURL(spec json.RawMessage) json.RawMessage {
	if len(spec) == 0 {
		return spec
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(spec, &obj); err != nil {
		return nil
	}
	var u string
	if raw, ok := obj["url"]; !ok || json.Unmarshal(raw, &u) != nil {
		return spec
	}
	masked := MaskRequestURL(u)
	if masked == u {
		return spec
	}
	var err error
	if obj["url"], err = json.Marshal(masked); err != nil {
		return nil
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return out
}

// maskSpecMap masks the sensitive entries of the map field of a spec's
// JSON object.
func maskSpecMap(spec json.RawMessage, field string) json.RawMessage {
	if len(spec) == 0 {
		return spec
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(spec, &obj); err != nil {
		return nil
	}
	raw, ok := obj[field]
	if !ok {
		return spec
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		delete(obj, field)
	} else {
		changed := false
		for name, v := range m {
			if SensitiveName(name) {
				if masked := MaskValue(v); masked != v {
					m[name], changed = masked, true
				}
			}
		}
		if !changed {
			return spec
		}
		if obj[field], err = json.Marshal(m); err != nil {
			return nil
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return out
}
