package tools

import (
	"strings"
	"testing"
)

func TestBashDoesNotInheritSecretEnv(t *testing.T) {
	t.Setenv("INFER_TEST_PROVIDER_KEY", "sk-hidden-canary")
	t.Setenv("INFER_TEST_VISIBLE", "still-here")
	env := newEnv(t)
	env.SecretEnv = []string{"INFER_TEST_PROVIDER_KEY"}
	out := run(t, env, "Bash", `{"command": "env"}`)
	if !out.Success || strings.Contains(out.Output, "sk-hidden-canary") || strings.Contains(out.Output, "INFER_TEST_PROVIDER_KEY") {
		t.Fatalf("a secret variable reached the command:\n%s", out.Output)
	}
	if !strings.Contains(out.Output, "INFER_TEST_VISIBLE=still-here") || !strings.Contains(out.Output, "PATH=") {
		t.Fatalf("the rest of the environment is missing:\n%s", out.Output)
	}
}
