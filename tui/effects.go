package tui

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	tea "charm.land/bubbletea/v2"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools/grants"
	"github.com/infer-workspace/infer/tui/approvals"
	"github.com/infer-workspace/infer/tui/browserpane"
)

// Every workspace call and file read happens here, in a tea.Cmd, so that
// Update never blocks and never does I/O.

// listenCmd waits until events are queued and takes them all at once.
func (m *Model) listenCmd() tea.Cmd {
	ctx, sub := m.ctx, m.sub
	return func() tea.Msg {
		select {
		case <-ctx.Done():
			return nil
		case <-sub.Ready():
			return eventsMsg(sub.Drain())
		}
	}
}

// loadState reads everything the panes show. It first drains the queued
// events: the state read after them already contains their effect.
func (m *Model) loadState() tea.Cmd {
	ws, sub := m.ws, m.sub
	return func() tea.Msg {
		sub.Drain()
		return stateMsg{
			snap:      ws.Snapshot(),
			approvals: ws.PendingApprovals(),
			browser:   ws.BrowserStatus(),
			view:      ws.BrowserView(),
			mode:      string(ws.Mode()),
			model:     ws.Model(),
			effort:    string(ws.Effort()),
			queue:     ws.Queue(),
			busy:      ws.Busy(),
			history:   ws.History(),
			skills:    ws.Skills(),
		}
	}
}

// maxDiffFile bounds the file read for a Write's diff.
const maxDiffFile = 1 << 20

// readFile reads a Write's target so the approval can show a diff.
func (m *Model) readFile(r approvals.FileRequest) tea.Cmd {
	path := m.resolvePath(r.Path)
	return func() tea.Msg {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fileMsg{id: r.ID}
		}
		if err != nil {
			return fileMsg{id: r.ID, err: err}
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxDiffFile+1))
		if err != nil {
			return fileMsg{id: r.ID, err: err}
		}
		if len(b) > maxDiffFile {
			return fileMsg{id: r.ID, err: fmt.Errorf("%s is larger than %d bytes, too large to compare", r.Path, maxDiffFile)}
		}
		return fileMsg{id: r.ID, exists: true, content: string(b)}
	}
}

// decodeScreenshot decodes a screenshot off the Update goroutine. Only the
// newest one is shown, whichever decode finishes first.
func (m *Model) decodeScreenshot(sh session.Screenshot) tea.Cmd {
	m.shotSeq++
	seq := m.shotSeq
	return func() tea.Msg {
		img, err := browserpane.DecodePreview(sh.Image)
		return screenshotMsg{seq: seq, url: sh.URL, at: sh.At, img: img, err: err}
	}
}

// call runs a workspace call and turns its error into a status line.
func call(what string, fn func() error) tea.Cmd {
	return func() tea.Msg {
		if err := fn(); err != nil {
			return flashMsg{text: what + ": " + err.Error(), warn: true}
		}
		return nil
	}
}

type (
	modelsMsg struct {
		models  []string
		current string
		// rejections holds, by model id, what the model rejected this
		// session.
		rejections map[string][]string
	}
	conversationsListMsg struct {
		metas  []store.Meta
		err    error
		opErr  error // the rename, pin or delete that preceded the list
		opened bool  // the picker is being opened (not refreshed)
	}
	grantsMsg struct {
		grants []grants.Grant
		err    error
	}
)

func (m *Model) fetchModels() tea.Cmd {
	ws := m.ws
	return func() tea.Msg {
		msg := modelsMsg{models: ws.Models(), current: ws.Model(), rejections: map[string][]string{}}
		for _, id := range msg.models {
			if r := ws.Rejections(id); len(r) > 0 {
				msg.rejections[id] = r
			}
		}
		return msg
	}
}

// conversations lists conversations after an optional change to them.
func (m *Model) conversations(op func() error, opened bool) tea.Cmd {
	ws := m.ws
	return func() tea.Msg {
		var opErr error
		if op != nil {
			opErr = op()
		}
		metas, err := ws.Conversations()
		return conversationsListMsg{metas: metas, err: err, opErr: opErr, opened: opened}
	}
}

// grants lists saved grants after an optional revoke.
func (m *Model) grants(revoke string) tea.Cmd {
	g := m.opts.Grants
	return func() tea.Msg {
		if revoke != "" {
			if err := g.Revoke(revoke); err != nil {
				gs, _ := g.List()
				return grantsMsg{grants: gs, err: fmt.Errorf("revoking: %w", err)}
			}
		}
		gs, err := g.List()
		return grantsMsg{grants: gs, err: err}
	}
}
