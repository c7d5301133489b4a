package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// Where chime login keeps its tokens: credentialsName in the directory
// "chime" of $XDG_CONFIG_HOME, or of ~/.config when that is not set (on
// every system, as gh and kubectl do, so that one path holds everywhere).
const (
	envXDGConfigHome = "XDG_CONFIG_HOME"
	credentialsName  = "credentials.yaml"
)

// credentials is the content of the credentials file: the session of each
// server logged in to, keyed by the server's URL as apiclient.Client's
// BaseURL gives it.
type credentials struct {
	Servers map[string]savedSession `yaml:"servers"`
}

// savedSession is one login's session.
type savedSession struct {
	Token   string    `yaml:"token"`
	User    string    `yaml:"user,omitempty"`
	Expires time.Time `yaml:"expires,omitempty"`
}

// credentialsPath returns the path of the credentials file, reading the
// environment with getenv.
func credentialsPath(getenv func(string) string) (string, error) {
	dir := getenv(envXDGConfigHome)
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			var err error
			if home, err = os.UserHomeDir(); err != nil {
				return "", fmt.Errorf("finding the directory for chime's credentials: set %s or HOME: %w", envXDGConfigHome, err)
			}
		}
		dir = filepath.Join(home, ".config")
	}
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%s %q: want an absolute path", envXDGConfigHome, dir)
	}
	return filepath.Join(dir, "chime", credentialsName), nil
}

// loadCredentials reads the credentials file at path; a file that does
// not exist holds no session.
func loadCredentials(path string) (*credentials, error) {
	c := &credentials{Servers: map[string]savedSession{}}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the credentials: %w", err)
	}
	if err := yaml.Unmarshal(raw, c); err != nil {
		return nil, fmt.Errorf("reading the credentials in %s: %w", path, err)
	}
	if c.Servers == nil {
		c.Servers = map[string]savedSession{}
	}
	return c, nil
}

// save writes the credentials to path, readable by the user alone (mode
// 0600, in a directory of mode 0700 if it creates one). It writes a new
// file and renames it over the old one, so that a reader never sees half
// a file and a file that was readable by others is replaced by one that
// is not.
func (c *credentials) save(path string) error {
	raw, err := yaml.Marshal(c)
	if err != nil {
		return fmt.Errorf("writing the credentials: %w", err)
	}
	raw = append([]byte("# Sessions of chime login, by server URL. chime logout removes them.\n"), raw...)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("writing the credentials: %w", err)
	}
	f, err := os.CreateTemp(dir, credentialsName+".*") // mode 0600
	if err != nil {
		return fmt.Errorf("writing the credentials: %w", err)
	}
	_, err = f.Write(raw)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("writing the credentials to %s: %w", path, err)
	}
	return nil
}
