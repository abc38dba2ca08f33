package agui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// Every way of cutting a link across deltas gives the panel the absolute
// link, and nothing is lost or sent twice.
func TestArtifactLinksSurviveAnySplit(t *testing.T) {
	const base = "http://127.0.0.1:52789"
	in := "Here: ![screenshot](/artifacts/screenshots/a.png) and ![x](/artifacts/b.png)] (/artifacts/ stays"
	want := strings.ReplaceAll(in, "](/artifacts/", "]("+base+"/artifacts/")
	everySplit(t, in, want, base, "", 3, 13)
}

// everySplit streams in to a fresh rewriter (for the artifacts folder dir)
// cut in three at every place, the second cut near and far from the first,
// and fails unless the panel gets want each time.
func everySplit(t *testing.T, in, want, base, dir string, near, far int) {
	t.Helper()
	for cut1 := 0; cut1 <= len(in); cut1++ {
		for _, cut2 := range []int{cut1, min(cut1+near, len(in)), min(cut1+far, len(in))} {
			r := linkRewriter{dir: dir}
			var got strings.Builder
			for _, d := range []string{in[:cut1], in[cut1:cut2], in[cut2:]} {
				for _, e := range r.panelText(events.NewTextMessageContentEvent("m1", d), base) {
					got.WriteString(e.(*events.TextMessageContentEvent).Delta)
				}
			}
			for _, e := range r.panelText(events.NewTextMessageEndEvent("m1"), base) {
				if c, ok := e.(*events.TextMessageContentEvent); ok {
					got.WriteString(c.Delta)
				}
			}
			if got.String() != want {
				t.Fatalf("cut at %d,%d:\n got %q\nwant %q", cut1, cut2, got.String(), want)
			}
		}
	}
}

// With no artifacts route there is nothing to point at: text goes as it is.
func TestArtifactLinksWithoutARoute(t *testing.T) {
	var r linkRewriter
	e := events.NewTextMessageContentEvent("m1", "![s](/artifacts/a.png")
	if got := r.panelText(e, ""); len(got) != 1 || got[0] != e {
		t.Fatalf("%v", got)
	}
}

// The path of a saved artifact, however the stream cuts it, reaches the
// panel as a short link to the file (a link's target as the address, code
// as the short name), and every other character as it was.
func TestArtifactPathsBecomeShortLinksAcrossAnySplit(t *testing.T) {
	const base = "http://127.0.0.1:52789"
	dir := t.TempDir()
	name := "20261201-185836-ea68c9aa00112233445566778899aabb.png"
	if err := os.MkdirAll(filepath.Join(dir, "screenshots"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "screenshots", name), []byte("png"), 0o600); err != nil {
		t.Fatal(err)
	}
	abs := dir + "/screenshots/" + name
	in := "Saved to " + abs + ". See [it](" + abs + ") or `" + abs + "`; cut: " + dir + "/screenshots/2026… and " + dir + "/other"
	url := base + "/artifacts/screenshots/" + name
	want := "Saved to [20261201-185836-ea68c9….png](" + url + "). See [it](" + url + ") or `20261201-185836-ea68c9….png`; cut: …/2026… and …/other"
	if got := panelContent(in, base, dir); got != want {
		t.Fatalf("whole:\n got %q\nwant %q", got, want)
	}
	everySplit(t, in, want, base, dir, 5, 70)
}
