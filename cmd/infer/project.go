package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// project locates the current project's data without starting a workspace,
// for the commands that only read or edit stored files.
type project struct {
	home, root string
}

// currentProject is the project of the working directory a command runs
// in (see where).
func currentProject(ctx context.Context) (project, error) {
	home, wd, err := dirs(ctx)
	if err != nil {
		return project{}, err
	}
	root, err := config.ProjectRoot(wd)
	if err != nil {
		return project{}, err
	}
	return project{home: home, root: root}, nil
}

func (p project) store() (*store.Store, error) {
	return store.Open(config.ConversationsDir(p.home, p.root), store.Options{})
}

func (p project) grants() (*grants.Store, error) {
	return grants.Open(filepath.Join(config.ProjectDir(p.home, p.root), "grants.json"))
}

// resolveConversation accepts a full id or a unique prefix of at least four
// characters, as people copy ids from `infer conversations list`.
func resolveConversation(st *store.Store, arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if len(arg) < 4 {
		return "", usageError{fmt.Errorf("conversation id %q is too short: give at least 4 characters of it (see `infer conversations list`)", arg)}
	}
	list, err := st.List()
	if err != nil {
		return "", err
	}
	var match []string
	for _, m := range list {
		if m.ID == arg {
			return m.ID, nil
		}
		if strings.HasPrefix(m.ID, arg) {
			match = append(match, m.ID)
		}
	}
	switch len(match) {
	case 0:
		return "", noConversationError{arg}
	case 1:
		return match[0], nil
	}
	return "", usageError{fmt.Errorf("%q matches %d conversations; give more of the id", arg, len(match))}
}

// noConversationError is resolveConversation's answer when no stored
// conversation's id starts with what was given.
type noConversationError struct{ arg string }

func (e noConversationError) Error() string {
	return fmt.Sprintf("no conversation %q in this project; `infer conversations list` shows them", e.arg)
}

// ago renders a time relative to now for listings.
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%d days ago", int(d.Hours()/24))
	}
	return t.Local().Format("2006-01-02")
}

// errNothingToContinue is --continue's answer in a project with no stored
// conversation.
var errNothingToContinue = errors.New("no stored conversation in this project to continue")

// latestConversation is the id of the project's most recently updated
// conversation, which --continue resumes, as `claude -c` does.
func latestConversation(st *store.Store) (string, error) {
	list, err := st.List()
	if err != nil {
		return "", err
	}
	// List puts the most recent first; said here, not relied on.
	var latest store.Meta
	for _, m := range list {
		if latest.ID == "" || m.UpdatedAt.After(latest.UpdatedAt) {
			latest = m
		}
	}
	if latest.ID == "" {
		return "", errNothingToContinue
	}
	return latest.ID, nil
}
