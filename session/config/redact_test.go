package config

import "testing"

func TestRedactSecrets(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"command":"touch X && id"}`, `{"command":"touch X && id"}`},
		{`{"command":"gh api -H \"Authorization: token ghp_abcdefghijklmnopqrstuvwxyz0123\" user"}`,
			`{"command":"gh api -H \"Authorization: token [redacted]\" user"}`},
		{`curl 'https://x.example/?key=sk-proj-aaaaaaaaaaaaaaaaaaaa&q=1'`, `curl 'https://x.example/?key=[redacted]&q=1'`},
		{`OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv make`, `OPENAI_API_KEY=[redacted] make`},
		{`model Meta-Llama-3-70B-Instruct stays`, `model Meta-Llama-3-70B-Instruct stays`},
		{"", ""},
	} {
		if got := RedactSecrets(c.in); got != c.want {
			t.Errorf("RedactSecrets(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
