package dialog

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/tui/theme"
)

// clock is a settable fake clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func press(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func trustPrompt(n int) TrustPrompt {
	p := TrustPrompt{Folder: "~/src/evil", File: "~/src/evil/.infer/config.yaml"}
	p.Settings = append(p.Settings,
		TrustSetting{Key: "agent.mode", Value: `"auto"`},
		TrustSetting{Key: "providers.openai.base_url", Value: `"http://127.0.0.1:4444/v1"`},
		TrustSetting{Key: "providers.openai.api_key", Value: "(a literal key, hidden)"},
	)
	for i := range n {
		p.Settings = append(p.Settings, TrustSetting{Key: fmt.Sprintf("providers.p%d.base_url", i), Value: `"http://x"`})
	}
	return p
}

func TestTrustDialogNeverTrustsByAccident(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	d := NewTrust(theme.New(true, true), trustPrompt(0), c.now)
	c.t = c.t.Add(time.Hour)
	// Letters a person might type ahead do nothing; "Not now" is the
	// default, so enter declines.
	for _, k := range []string{"t", "y", "a", "T", "Y"} {
		if a := d.HandleKey(press(k)); a.Kind != None {
			t.Fatalf("%q answered %v", k, a.Kind)
		}
	}
	if a := d.HandleKey(press("enter")); a.Kind != Close {
		t.Fatalf("enter on the default answered %v, want Close (not now)", a.Kind)
	}
	for _, k := range []string{"esc", "n"} {
		d := NewTrust(theme.New(true, true), trustPrompt(0), c.now)
		d.HandleKey(press("right"))
		if a := d.HandleKey(press(k)); a.Kind != Close {
			t.Errorf("%s answered %v", k, a.Kind)
		}
	}
}

func TestTrustDialogTrustsOnDeliberateChoice(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	d := NewTrust(theme.New(true, true), trustPrompt(0), c.now)
	d.HandleKey(press("right"))
	if a := d.HandleKey(press("enter")); a.Kind != None {
		t.Fatalf("enter right after opening answered %v: typed-ahead keys must not trust", a.Kind)
	}
	c.t = c.t.Add(TrustArmDelay)
	if a := d.HandleKey(press("enter")); a.Kind != TrustFolder || a.ID != "~/src/evil" {
		t.Fatalf("trust answered %+v", a)
	}
	d.HandleKey(press("left"))
	if a := d.HandleKey(press("enter")); a.Kind != Close {
		t.Fatalf("back on not now: %v", a.Kind)
	}
	d.HandleKey(press("tab"))
	if a := d.HandleKey(press("space")); a.Kind != None && a.Kind != TrustFolder {
		t.Fatalf("space: %v", a.Kind)
	}
}

func TestTrustDialogView(t *testing.T) {
	p := trustPrompt(0)
	p.File = "~/src/evil\x1b]0;pwned\a/.infer/config.yaml"
	d := NewTrust(theme.New(true, false), p, nil)
	view := d.View(100, 30)
	plain := ansi.Strip(view)
	for _, want := range []string{"Trust this folder?", "agent.mode", `"auto"`, "providers.openai.base_url", `"http://127.0.0.1:4444/v1"`,
		"(a literal key, hidden)", "› [ Not now ]", "Trust", `\x1b]0;pwned\a`, "Trust only folders whose"} {
		if !strings.Contains(plain, want) {
			t.Errorf("view lacks %q:\n%s", want, plain)
		}
	}
	if strings.Contains(view, "\x1b]0;") || strings.Contains(view, "\a") {
		t.Error("the file name's escape reached the terminal")
	}
	d.HandleKey(press("right"))
	if plain := ansi.Strip(d.View(100, 30)); !strings.Contains(plain, "› [ Trust ]") {
		t.Errorf("selected Trust not marked:\n%s", plain)
	}

	p.Changed, p.TrustedAt = true, time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	if plain := ansi.Strip(NewTrust(theme.New(true, true), p, nil).View(100, 30)); !strings.Contains(plain, "changed since you trusted this folder on 2026-01-0") {
		t.Errorf("changed file not said:\n%s", plain)
	}
}

func TestTrustDialogScrollsLongLists(t *testing.T) {
	d := NewTrust(theme.New(true, true), trustPrompt(40), nil)
	const maxW, maxH = 80, 20
	view := d.View(maxW, maxH)
	lines := strings.Split(view, "\n")
	if len(lines) > maxH {
		t.Fatalf("view is %d lines, more than %d", len(lines), maxH)
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > maxW {
			t.Fatalf("line of %d cells: %q", w, l)
		}
	}
	if !strings.Contains(view, "↓") || !strings.Contains(view, "more") || !strings.Contains(view, "[ Not now ]") {
		t.Fatalf("no scroll mark or no buttons:\n%s", view)
	}
	for range 100 {
		d.HandleKey(press("down"))
	}
	view = d.View(maxW, maxH)
	if !strings.Contains(view, "providers.p39.base_url") || !strings.Contains(view, "↑") {
		t.Fatalf("scrolled to the end:\n%s", view)
	}
}
