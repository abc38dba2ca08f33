package session

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// Another agent using the person's browser through `infer mcp` acts in the
// person's name, so its calls must show where the person looks: each one is
// an OutsideCall event that the chat of every front end shows live (in the
// terminal as a tool row labelled with who made it, in the browser panel as
// a line once it ended), and a notice recorded beside the conversation's
// messages. They are not messages: the model never reads them, since they
// are no part of its dialogue with the person.

// outside reports whether calls from origin are shown as OutsideCalls
// rather than announced with a notice (the panel's tool_request, whose
// notice predates them, keeps its notice).
func outside(origin Origin) bool { return origin == tools.OriginMCP }

// Bounds on what an outside call's line quotes: the arguments and the
// result are the caller's and the page's, of any length.
const (
	maxOutsideArgs   = 120
	maxOutsideResult = 160
)

// runOutside runs an outside call, publishing its start and its end and
// recording its line in the conversation active when it started.
func (w *Workspace) runOutside(ctx context.Context, id, name, args string, origin Origin, mode tools.Mode) tools.Outcome {
	w.mu.Lock()
	conv, convID := w.conv, w.conv.id
	w.mu.Unlock()
	w.publish(OutsideCall{Conversation: convID, ID: id, Name: name, Args: args, Origin: origin})
	o := w.pipeline.Run(ctx, tools.Call{ID: id, Name: name, Args: args, Origin: origin}, mode)
	done := OutsideCallEnded(o)
	done.Conversation = convID
	w.record(conv, done.Line(), Info, origin)
	w.publish(done)
	return o
}

// OutsideCallEnded is the OutsideCall that ends the call o is the outcome
// of (its Conversation unset). Standalone infer mcp, which has no
// workspace, shows its calls in the panel with it too.
func OutsideCallEnded(o tools.Outcome) OutsideCall {
	return OutsideCall{ID: o.Call.ID, Name: o.Call.Name, Args: o.Call.Args, Origin: o.Call.Origin,
		Done: true, OK: o.Success, Denied: o.Denied, Result: outsideResult(o), Duration: o.Duration}
}

// outsideResult is what a call answered: its output, or why it failed or
// did not run.
func outsideResult(o tools.Outcome) string {
	switch {
	case o.Success:
		return o.Output
	case o.Denied && o.DeniedReason != "":
		return o.DeniedReason
	case o.Error != "":
		return o.Error
	}
	return o.Output
}

// Line is the call in one line of plain text, as the browser panel and the
// recorded notice show it: who called which tool on what, and, once it
// ended, how ("✓ Example Domain", "✗ not run: rejected in the terminal").
// Everything quoted is made safe to show and cut short.
func (c OutsideCall) Line() string {
	line := c.Origin.Label() + " · " + quote(c.Name, maxQuotedName)
	if a := quote(outsideArgs(c.Name, c.Args), maxOutsideArgs); a != "" {
		line += " " + a
	}
	if !c.Done {
		return line
	}
	result := quote(firstLine(c.Result), maxOutsideResult)
	switch {
	case c.OK:
		line += " — ✓"
	case c.Denied:
		line += " — ✗ not run"
	default:
		line += " — ✗ failed"
	}
	if result != "" {
		if !c.OK {
			line += ":"
		}
		line += " " + result
	}
	return line
}

// outsideArgs names what a browser call acts on (the URL, the selector);
// other tools' arguments are shown as JSON.
func outsideArgs(name, args string) string {
	var a map[string]any
	if json.Unmarshal([]byte(args), &a) != nil {
		return readableJSON(args)
	}
	str := func(k string) string { s, _ := a[k].(string); return s }
	switch name {
	case "BrowserNavigate":
		return str("url")
	case "BrowserClick":
		return str("selector")
	case "BrowserType":
		s := "text into " + str("selector")
		if b, _ := a["press_enter"].(bool); b {
			s += " ⏎"
		}
		return s
	case "BrowserRead":
		if sel := str("selector"); sel != "" {
			return sel
		}
		return "whole page"
	case "BrowserScreenshot", "BrowserTabs":
		return ""
	}
	return readableJSON(args)
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// record keeps a notice in conv, whose id it returns, without showing it
// (see notice, which also shows it).
func (w *Workspace) record(conv *conversation, text string, level Level, origin Origin) string {
	w.mu.Lock()
	held := conv.heldBy
	w.mu.Unlock()
	n := store.Notice{Text: text, Origin: string(origin), Warn: level == Warn}
	var err error
	if held == nil {
		err = w.ensureStored(conv)
	}
	w.mu.Lock()
	id := conv.id
	w.mu.Unlock()
	switch {
	case held != nil:
		err = held
	case err == nil:
		err = w.opts.Store.AppendNotice(id, n)
	}
	if err != nil {
		w.log.Warn("recording a notice in the conversation", "conversation", id, "err", err)
		return id
	}
	w.change(conv, transcript.Change{Op: transcript.ItemDone, Conversation: id, Item: transcript.Item{ID: newID(), Kind: transcript.Notice,
		Text: text, Origin: origin, Level: level, At: time.Now().UTC()}})
	return id
}
