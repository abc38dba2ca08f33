package tui

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeNamesEveryCommand: the README's paragraph on commands is where
// a new user learns them, so each built-in slash command appears there;
// /temperature was once missing.
func TestReadmeNamesEveryCommand(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		if !strings.Contains(string(data), "`/"+c.Name) {
			t.Errorf("README.md does not mention /%s (%s)", c.Name, c.Description)
		}
	}
}
