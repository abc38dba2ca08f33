// Command infer-sim impersonates the browser extension: it dials a running
// infer's bridge, authenticates with the shared token, and answers browser
// commands from a simulated browser, reconnecting with backoff like the
// real extension. Use it to exercise `infer` or `infer serve` without a
// browser.
//
//	infer-sim [--url ws://127.0.0.1:52789/ws | --port N] [--token T] [--verbose]
//
// The token comes from --token, else $INFER_TOKEN, else extension.token in
// $INFER_HOME/browser_use.yaml (default ~/.infer); the port likewise falls
// back to extension.port there.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/infer-workspace/infer/sim"
)

const defaultPort = 52789

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr))
}

// settings are the resolved command line.
type settings struct {
	url, token string
	verbose    bool
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	s, err := parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "infer-sim:", err)
		return 2
	}
	level := slog.LevelInfo
	if s.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	log.Info("infer-sim: dialling infer", "url", s.url)
	client := sim.NewClient(sim.ClientOptions{
		URL:     s.url,
		Token:   s.token,
		Browser: &sim.Minimal{},
		Logger:  log,
	})
	if err := client.Run(ctx); err != nil {
		fmt.Fprintln(stderr, "infer-sim:", err)
		return 1
	}
	return 0
}

// parse resolves flags, environment and browser_use.yaml into settings.
func parse(args []string, getenv func(string) string, stderr io.Writer) (settings, error) {
	fs := flag.NewFlagSet("infer-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "bridge WebSocket URL (default ws://127.0.0.1:<port>/ws)")
	port := fs.Int("port", 0, "bridge port on 127.0.0.1 (default extension.port from browser_use.yaml, else 52789)")
	token := fs.String("token", "", "pairing token (default $INFER_TOKEN, else extension.token from browser_use.yaml)")
	verbose := fs.Bool("verbose", false, "log every frame-level event")
	if err := fs.Parse(args); err != nil {
		return settings{}, err
	}
	if fs.NArg() > 0 {
		return settings{}, fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	if *url != "" && *port != 0 {
		return settings{}, errors.New("--url and --port both given: use one")
	}
	s := settings{url: *url, token: *token, verbose: *verbose}
	if s.token == "" {
		s.token = getenv("INFER_TOKEN")
	}
	if s.url == "" || s.token == "" {
		cfg, path, err := readBrowserUse(getenv)
		if err != nil {
			return settings{}, err
		}
		if s.token == "" {
			s.token = cfg.Extension.Token
		}
		if s.url == "" {
			p := *port
			if p == 0 {
				p = cfg.Extension.Port
			}
			if p == 0 {
				p = defaultPort
			}
			s.url = "ws://127.0.0.1:" + strconv.Itoa(p) + "/ws"
		}
		if s.token == "" {
			return settings{}, fmt.Errorf("no token: pass --token, set INFER_TOKEN, or run `infer init` to create %s", path)
		}
	}
	return s, nil
}

// browserUse is the part of browser_use.yaml infer-sim needs.
type browserUse struct {
	Extension struct {
		Port  int    `yaml:"port"`
		Token string `yaml:"token"`
	} `yaml:"extension"`
}

// readBrowserUse reads $INFER_HOME/browser_use.yaml; a missing file is
// not an error (flags and environment may be enough).
func readBrowserUse(getenv func(string) string) (browserUse, string, error) {
	var cfg browserUse
	home := getenv("INFER_HOME")
	if home == "" {
		userHome, err := os.UserHomeDir()
		if err != nil {
			return cfg, "", fmt.Errorf("cannot find the home directory (set INFER_HOME): %w", err)
		}
		home = filepath.Join(userHome, ".infer")
	}
	path := filepath.Join(home, "browser_use.yaml")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, path, nil
	}
	if err != nil {
		return cfg, path, fmt.Errorf("read %s: %w", path, err)
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return cfg, path, fmt.Errorf("%s is not valid YAML: %w", path, err)
	}
	return cfg, path, nil
}
