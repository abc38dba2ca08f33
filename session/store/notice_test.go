package store

import (
	"os"
	"strings"
	"testing"
)

// TestNoticesAreKeptBesideMessages records notices around messages, on disk
// and in memory: they load in order, placed by the messages before them,
// and change neither the messages nor the summary a list shows.
func TestNoticesAreKeptBesideMessages(t *testing.T) {
	disk, _ := openTest(t, t.TempDir())
	for name, s := range map[string]*Store{"disk": disk, "memory": OpenMemory()} {
		t.Run(name, func(t *testing.T) {
			id := mustCreate(t, s)
			if err := s.AppendNotice(id, Notice{Text: "⚠ first", Origin: "panel"}); err != nil {
				t.Fatal(err)
			}
			mustAppend(t, s, id, user("hello"))
			if err := s.AppendNotice(id, Notice{Text: "second", Origin: "panel"}); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendNotice(id, Notice{Text: "  "}); err == nil {
				t.Error("a blank notice was accepted")
			}
			c := mustLoad(t, s, id)
			if len(c.Messages) != 1 || c.Meta.MessageCount != 1 || c.Meta.Title != "hello" {
				t.Fatalf("messages %+v, meta %+v", c.Messages, c.Meta)
			}
			if len(c.Notices) != 2 {
				t.Fatalf("notices %+v", c.Notices)
			}
			// A notice written before Warn existed, with a leading sign,
			// reads as a warning without it.
			if n := c.Notices[0]; n.Text != "first" || !n.Warn || n.Origin != "panel" || n.After != 0 || n.At.IsZero() {
				t.Errorf("first notice %+v", n)
			}
			if n := c.Notices[1]; n.Text != "second" || n.Warn || n.After != 1 {
				t.Errorf("second notice %+v", n)
			}
		})
	}
	// A notice is its own kind of line, so an older infer skips it rather
	// than taking it for a message.
	metas, err := disk.List()
	if err != nil || len(metas) != 1 {
		t.Fatalf("list %+v %v", metas, err)
	}
	data, err := os.ReadFile(disk.Path(metas[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `{"kind":"notice",`) || strings.Count(string(data), `"kind":"message"`) != 1 {
		t.Fatalf("file:\n%s", data)
	}
}
