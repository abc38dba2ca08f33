package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/internal/asuser"
)

// squatHelperEnv, when set to an address, makes the test binary a squatter
// on it: it listens, says "listening", and prints whatever connections send
// until its standard input closes.
const squatHelperEnv = "INFER_TEST_SQUAT"

func squatHelper(addr string) {
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		fmt.Println("listen failed:", err)
		os.Exit(1)
	}
	fmt.Println("listening")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(os.Stdout, c)
			}()
		}
	}()
	io.Copy(io.Discard, os.Stdin)
}

// TestDoctorWarnsOfAnotherUsersListener has uid 65534 listen on the bridge
// port: doctor fails the bridge check naming the uid, and sends the squatter
// nothing (not the token a /status request would carry).
func TestDoctorWarnsOfAnotherUsersListener(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	cmd := asuser.Command(t, asuser.Nobody, fmt.Sprintf("%s=127.0.0.1:%d", squatHelperEnv, port))
	token := pairHome(t, port)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	if line, _ := r.ReadString('\n'); line != "listening\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("squatter: %q", line)
	}

	out, errOut, _ := infer(t, "doctor")
	stdin.Close()
	heard, _ := io.ReadAll(r)
	cmd.Wait()
	if !strings.Contains(out, "FAIL  bridge") || !strings.Contains(out, "held by another user (uid 65534)") {
		t.Errorf("doctor does not warn of the squatter:\n%s%s", out, errOut)
	}
	if strings.Contains(string(heard), token) || len(heard) != 0 {
		t.Errorf("doctor sent the squatter %q", heard)
	}
}
