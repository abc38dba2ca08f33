package tui

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/infer-workspace/infer/tui/dialog"
)

func trustTestPrompt() dialog.TrustPrompt {
	return dialog.TrustPrompt{
		Folder: "~/src/evil", File: "~/src/evil/.infer/config.yaml",
		Settings: []dialog.TrustSetting{{Key: "agent.mode", Value: `"auto"`}},
	}
}

// TestAskTrustAnswers runs the real program with keys on its input.
func TestAskTrustAnswers(t *testing.T) {
	t.Parallel()
	// The clock is past the arming delay from the first key on.
	start := time.Unix(1000, 0)
	calls := 0
	now := func() time.Time {
		calls++
		if calls == 1 {
			return start
		}
		return start.Add(time.Hour)
	}
	cases := []struct {
		name, keys string
		want       TrustChoice
	}{
		{"enter declines", "\r", TrustNotNow},
		{"n declines", "n", TrustNotNow},
		{"right then enter trusts", "\x1b[C\r", TrustYes},
		{"ctrl+c quits", "\x03", TrustQuit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls = 0
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := askTrust(ctx, trustTestPrompt(), Options{Background: "dark", NoColor: true, Now: now},
				tea.WithInput(strings.NewReader(tc.keys)), tea.WithOutput(io.Discard), tea.WithWindowSize(100, 30))
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestAskTrustStopsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan TrustChoice, 1)
	go func() {
		got, _ := askTrust(ctx, trustTestPrompt(), Options{Background: "dark"},
			tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithWindowSize(100, 30))
		done <- got
	}()
	cancel()
	select {
	case got := <-done:
		if got != TrustQuit {
			t.Fatalf("cancelled: %v, want TrustQuit (never trust by default)", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("askTrust did not return after its context ended")
	}
}

func TestTrustModelView(t *testing.T) {
	t.Parallel()
	m := newTrustModel(trustTestPrompt(), Options{Background: "dark", NoColor: true})
	m.Update(tea.WindowSizeMsg{Width: 90, Height: 24})
	v := m.View()
	if !v.AltScreen || !strings.Contains(v.Content, "Trust this folder?") || !strings.Contains(v.Content, `agent.mode`) {
		t.Fatalf("view:\n%s", v.Content)
	}
	if strings.Contains(v.Content, "\x1b[") {
		t.Error("NoColor view has escapes")
	}
	if lines := strings.Split(v.Content, "\n"); len(lines) != 24 {
		t.Errorf("view is %d lines, want the screen's 24", len(lines))
	}
}
