package sandbox

import (
	"os"
	"slices"
	"strings"
)

// keptEnv are the variables a confined command inherits. The list says
// what may pass rather than what may not, because a secret's name cannot
// be recognised: DATABASE_URL, SENTRY_DSN or MY_APP_KEY look like any
// other setting. What is here is what builds, tests and terminals need to
// behave as they do outside; a person adds more names in sandbox.env.
//
// GH_TOKEN and GITHUB_TOKEN are not here: gh's hosts.yml is hidden as a
// credential store, and keeping the same token in the environment would
// undo that. A person who wants confined `gh` to work lists them in
// sandbox.env; commands they approve run outside and have them anyway.
var keptEnv = map[string]bool{
	// Where things are, and who is running them.
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"PWD": true, "TMPDIR": true, "HOSTNAME": true,
	// Locale and terminal: output that looks as it does outside.
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLORTERM": true,
	"NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "TERMINFO": true,
	"TERMINFO_DIRS": true, "COLUMNS": true, "LINES": true,
	// Programs a command may hand text to.
	"EDITOR": true, "VISUAL": true, "PAGER": true, "LESS": true, "MANPATH": true,
	// Test runners change behaviour under CI.
	"CI": true,
	// Certificates a corporate network needs to reach anything.
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true, "NODE_EXTRA_CA_CERTS": true,
	"REQUESTS_CA_BUNDLE": true, "CURL_CA_BUNDLE": true,
	// The proxy infer gives confined commands: its address, not a secret.
	"HTTP_PROXY": true, "HTTPS_PROXY": true, "ALL_PROXY": true, "NO_PROXY": true,
	"http_proxy": true, "https_proxy": true, "all_proxy": true, "no_proxy": true,
	// Go. GOPROXY may name a private module proxy, which a build needs;
	// its credentials belong in .netrc or GOAUTH, which stay hidden.
	"GOPATH": true, "GOROOT": true, "GOBIN": true, "GOFLAGS": true, "GOCACHE": true,
	"GOMODCACHE": true, "GOPROXY": true, "GOPRIVATE": true, "GONOPROXY": true,
	"GONOSUMDB": true, "GOSUMDB": true, "GOINSECURE": true, "GOTOOLCHAIN": true,
	"GOWORK": true, "GO111MODULE": true, "GOOS": true, "GOARCH": true,
	"GOAMD64": true, "GOARM": true, "GOEXPERIMENT": true, "GODEBUG": true,
	"GOENV": true, "GOTMPDIR": true, "GOTELEMETRY": true,
	// C and C++ toolchains (CGO_* below).
	"CC": true, "CXX": true, "CPP": true, "LD": true, "AR": true, "CFLAGS": true,
	"CXXFLAGS": true, "CPPFLAGS": true, "LDFLAGS": true, "MAKEFLAGS": true,
	"PKG_CONFIG_PATH": true, "LD_LIBRARY_PATH": true, "LIBRARY_PATH": true,
	"CPATH": true, "C_INCLUDE_PATH": true, "CPLUS_INCLUDE_PATH": true,
	// JVM, Rust, Node, Python, Ruby: where each keeps its toolchain.
	"JAVA_HOME": true, "GRADLE_USER_HOME": true, "MAVEN_HOME": true,
	"CARGO_HOME": true, "RUSTUP_HOME": true, "RUSTUP_TOOLCHAIN": true,
	"RUSTFLAGS": true, "CARGO_TARGET_DIR": true,
	"NODE_PATH": true, "NVM_DIR": true, "NVM_BIN": true,
	"PYENV_ROOT": true, "PYENV_VERSION": true, "VIRTUAL_ENV": true,
	"PYTHONPATH": true, "CONDA_PREFIX": true, "CONDA_DEFAULT_ENV": true,
	"GEM_HOME": true, "GEM_PATH": true, "RBENV_ROOT": true,
	// The person's folders for configuration, data and caches. Not
	// XDG_RUNTIME_DIR: it holds the sockets of services that act outside
	// the sandbox, and the sandbox hides /run.
	"XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_CACHE_HOME": true,
	"XDG_STATE_HOME": true, "XDG_CONFIG_DIRS": true, "XDG_DATA_DIRS": true,
}

// keptPrefixes are families of variables kept whole: the locale's LC_*
// and cgo's CGO_CFLAGS, CGO_ENABLED and the rest.
var keptPrefixes = []string{"LC_", "CGO_"}

// KeepsEnv reports whether a confined command inherits the variable name:
// one on the built-in list, or one of extra (the person's sandbox.env).
func KeepsEnv(name string, extra []string) bool {
	if keptEnv[name] || slices.Contains(extra, name) {
		return true
	}
	for _, p := range keptPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Environ is env (nil means infer's own) cut down to what a confined
// command inherits: the built-in list and the names in extra. Everything
// else is dropped, so a secret nobody thought to name stays outside.
func Environ(env, extra []string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if KeepsEnv(name, extra) {
			out = append(out, kv)
		}
	}
	return out
}
