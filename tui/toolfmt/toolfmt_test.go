package toolfmt

import (
	"testing"
	"time"
)

func TestShort(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"Bash", `{"command":"ls\n -la"}`, "ls -la"},
		{"BrowserNavigate", `{"url":"https://x"}`, "https://x"},
		{"BrowserType", `{"text":"hi","selector":"#q","press_enter":true}`, `"hi" into #q ⏎`},
		{"BrowserRead", `{}`, "whole page"},
		{"Edit", `{"path":"a.go","old_string":"x"}`, "a.go"},
		{"Custom", `{"b":"2","a":"1","n":3}`, "a=1 b=2"},
		{"Bash", `not json`, "not json"},
	} {
		if got := Short(tc.name, tc.args); got != tc.want {
			t.Errorf("Short(%s, %s) = %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		820 * time.Millisecond: "820ms", 4200 * time.Millisecond: "4.2s", 65 * time.Second: "1m05s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
