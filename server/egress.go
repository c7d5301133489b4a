package server

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs/egress"
)

// newEgressPolicy builds the policy of cfg.Egress, which has its defaults
// applied, and checks the configured default webhooks against it.
func newEgressPolicy(cfg Config) (*egress.Policy, error) {
	p, err := egress.New(cfg.Egress)
	if err != nil {
		if re, ok := errors.AsType[*egress.RuleError](err); ok {
			return nil, fmt.Errorf("%w: Egress.%s[%d] %q: %s", ErrInvalidConfig, re.List, re.Index, re.Entry, re.Reason)
		}
		return nil, fmt.Errorf("%w: Egress: %w", ErrInvalidConfig, err)
	}
	for _, list := range []struct {
		field string
		urls  []string
	}{{"DefaultWebhooks", cfg.Alert.DefaultWebhooks}, {"DefaultSlack", cfg.Alert.DefaultSlack}, {"DefaultTeams", cfg.Alert.DefaultTeams}} {
		for i, u := range list.urls {
			if err := p.CheckURL(u); err != nil {
				return nil, fmt.Errorf("%w: Alert.%s[%d]: %w", ErrInvalidConfig, list.field, i, err)
			}
		}
	}
	return p, nil
}

// checkPlanEgress refuses a job whose HTTP URL or alert webhooks name a
// host the egress policy refuses. It is the early check, on what the job
// says literally; a templated host, or a name's addresses, are checked
// when the request is made.
func (s *Server) checkPlanEgress(p *plan) *api.Error {
	if p.http != nil {
		if err := s.egress.CheckURL(p.http.URL); err != nil {
			return invalidf("http.url", "%v", err)
		}
	}
	if err := s.checkWebhooksEgress("alerts.webhooks", p.recipients.Webhooks); err != nil {
		return err
	}
	if err := s.checkWebhooksEgress("alerts.slack", p.recipients.Slack); err != nil {
		return err
	}
	return s.checkWebhooksEgress("alerts.teams", p.recipients.Teams)
}

// checkWebhooksEgress refuses webhook URLs whose host the egress policy
// refuses, naming the first as field[i].
func (s *Server) checkWebhooksEgress(field string, urls []string) *api.Error {
	for i, u := range urls {
		if err := s.egress.CheckURL(u); err != nil {
			return invalidf(field+"["+strconv.Itoa(i)+"]", "%v", err)
		}
	}
	return nil
}
