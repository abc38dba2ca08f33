package browser

import (
	"strings"
	"testing"
)

func TestCheckAcceptsEveryActionAndNamesThemForAnyOther(t *testing.T) {
	for _, a := range Actions {
		if err := a.Check(); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	err := Action("scroll").Check()
	if err == nil {
		t.Fatal("scroll was accepted")
	}
	const want = `browser: unknown action "scroll" (want navigate, click, type, read, screenshot or tabs)`
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if err := Action("").Check(); err == nil || !strings.Contains(err.Error(), `""`) {
		t.Errorf("empty action: %v", err)
	}
}
