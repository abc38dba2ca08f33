package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The child side of TestTwoProcessesAppend: when started with these
// variables set, the test binary appends to a conversation and exits.
const (
	childDirEnv   = "INFER_STORE_TEST_CHILD_DIR"
	childIDEnv    = "INFER_STORE_TEST_CHILD_ID"
	childNameEnv  = "INFER_STORE_TEST_CHILD_NAME"
	childCountEnv = "INFER_STORE_TEST_CHILD_COUNT"
)

func TestChildProcessAppender(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestTwoProcessesAppend")
	}
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	id, name := os.Getenv(childIDEnv), os.Getenv(childNameEnv)
	count, _ := strconv.Atoi(os.Getenv(childCountEnv))
	for i := range count {
		text := fmt.Sprintf("%s-%d", name, i)
		if err := s.Append(id, user(text), Message{Role: RoleTool, ToolCallID: text, Content: string(make([]byte, 3000))}); err != nil {
			t.Fatal(err)
		}
		if err := s.recordToolResult(id, text, i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTwoProcessesAppend(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	const count = 60
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var wg sync.WaitGroup
	outputs := make([][]byte, 2)
	errs := make([]error, 3)
	for i, name := range []string{"child0", "child1"} {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildProcessAppender$", "-test.count=1")
		cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childIDEnv+"="+id, childNameEnv+"="+name, childCountEnv+"="+strconv.Itoa(count))
		wg.Add(1)
		go func() {
			defer wg.Done()
			outputs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range count {
			text := fmt.Sprintf("parent-%d", i)
			if err := s.Append(id, user(text), Message{Role: RoleTool, ToolCallID: text, Content: string(make([]byte, 3000))}); err != nil {
				errs[2] = err
				return
			}
			if err := s.recordToolResult(id, text, i%2 == 0); err != nil {
				errs[2] = err
				return
			}
		}
	}()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v\n%s", i, err, outputs[min(i, 1)])
		}
	}

	checkLines(t, s.Path(id))
	c := mustLoad(t, s, id)
	if c.SkippedLines != 0 || len(c.Messages) != 3*count*2 {
		t.Fatalf("%d messages, %d skipped lines; want %d and 0", len(c.Messages), c.SkippedLines, 3*count*2)
	}
	seen := map[string]bool{}
	for _, m := range c.Messages {
		seen[m.Content] = true
	}
	for _, name := range []string{"child0", "child1", "parent"} {
		for i := range count {
			text := fmt.Sprintf("%s-%d", name, i)
			if !seen[text] {
				t.Fatalf("message %s lost", text)
			}
			if ok, known := c.ToolResults[text]; !known || ok != (i%2 == 0) {
				t.Fatalf("tool result %s = %v, %v", text, ok, known)
			}
		}
	}
	list, err := s.List()
	if err != nil || list[0].MessageCount != 3*count*2 {
		t.Fatalf("List = %+v, %v", list, err)
	}
}
