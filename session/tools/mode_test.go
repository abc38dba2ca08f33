package tools

import "testing"

func TestModes(t *testing.T) {
	t.Parallel()
	if got := Modes(); len(got) != 4 || got[0] != Standard || got[3] != AutoWithJudge {
		t.Fatalf("Modes() = %v", got)
	}
	cycle := []Mode{Standard, Plan, Auto, AutoWithJudge, Standard}
	for i := 0; i+1 < len(cycle); i++ {
		if got := Next(cycle[i]); got != cycle[i+1] {
			t.Errorf("Next(%s) = %s, want %s", cycle[i], got, cycle[i+1])
		}
	}
	if Next("bogus") != Standard {
		t.Error("Next of an unknown mode is not standard")
	}
	for in, want := range map[string]Mode{"standard": Standard, " PLAN ": Plan, "auto": Auto, "auto-with-judge": AutoWithJudge, "auto_with_judge": AutoWithJudge} {
		if got, ok := ParseMode(in); !ok || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "yolo", "autowithjudge"} {
		if _, ok := ParseMode(in); ok {
			t.Errorf("ParseMode(%q) accepted", in)
		}
	}
	for _, m := range Modes() {
		if m.Description() == "unknown mode" {
			t.Errorf("%s has no description", m)
		}
	}
}
