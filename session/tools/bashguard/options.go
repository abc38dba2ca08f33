package bashguard

import (
	"path"
	"strings"
)

// This file finds programs that tools which are not interpreters run
// because an option names them: tar's --to-command and checkpoint
// actions, make reading its makefile from standard input, zip's test
// command, the remote shell of rsync and scp, ssh's ProxyCommand, man's
// pager and strace's output pipe. Such a program is code the guard never
// sees (a force push hidden in tar --checkpoint-action=exec= ran although
// force pushes ask), so these options ask in every mode, like python -c.

// option is one option as a program's parser would read it: a short
// letter ("-e") or a long name ("--rsh"), with its value when it takes
// one.
type option struct {
	name, value string
}

// readOptions lists the options in args. A short cluster gives each of
// its letters; a letter in valued takes the rest of the word, or the next
// word when the cluster ends with it. A long option takes what follows
// its =, or the next word when its name abbreviates one of longValued.
// Every word is read, operands included, up to --: programs that permute
// their arguments accept options after operands, and a wrong guess about
// which word is an operand must not hide one.
func readOptions(args []string, valued string, longValued ...string) []option {
	var out []option
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--":
			return out
		case strings.HasPrefix(w, "--"):
			name, value, has := strings.Cut(w, "=")
			if !has {
				for _, l := range longValued {
					if abbreviates(name, l) && i+1 < len(args) {
						i++
						value = args[i]
						break
					}
				}
			}
			out = append(out, option{name, value})
		case len(w) > 1 && w[0] == '-':
			for j := 1; j < len(w); j++ {
				c := w[j]
				if strings.IndexByte(valued, c) < 0 {
					out = append(out, option{"-" + string(c), ""})
					continue
				}
				value := w[j+1:]
				if value == "" && i+1 < len(args) {
					i++
					value = args[i]
				}
				out = append(out, option{"-" + string(c), value})
				break
			}
		}
	}
	return out
}

// abbreviates reports whether the long option name (with its dashes) is
// full or an abbreviation of it, as getopt_long accepts. An ambiguous
// abbreviation counts too: the program refuses it, so asking costs
// nothing. except lists other options whose names full begins with
// (tar's --checkpoint before --checkpoint-action): those, spelled in
// full, are not full.
func abbreviates(name, full string, except ...string) bool {
	if len(name) < 3 || !strings.HasPrefix(full, name) {
		return false
	}
	for _, e := range except {
		if name == e {
			return false
		}
	}
	return true
}

// optionRisk says why a tool given as literal words runs a program that
// one of its options names, or returns "".
func optionRisk(words []string) string {
	name := path.Base(words[0])
	args := words[1:]
	runs := func(opt, what string) string {
		return "`" + name + " " + shorten(opt, 30) + "` makes " + name + " run " + what + "; infer cannot see what it does"
	}
	switch name {
	case "tar", "gtar", "bsdtar":
		return tarRisk(args, runs)
	case "make", "gmake":
		for _, o := range readOptions(args, "CfIoW", "--file", "--makefile", "--directory", "--include-dir", "--old-file", "--what-if", "--assume-old", "--assume-new", "--new-file") {
			if (o.name == "-f" || abbreviates(o.name, "--file") || abbreviates(o.name, "--makefile")) && isStdinPath(o.value) {
				return runs(o.name+" "+o.value, "a makefile read from standard input, whose recipes are shell code")
			}
		}
		// A variable set on the command line overrides the makefile's;
		// these decide what runs every recipe, or add options (--eval).
		for _, w := range args {
			if v, _, ok := strings.Cut(w, "="); ok && (v == "SHELL" || v == ".SHELLFLAGS" || v == "MAKEFLAGS" || v == "MFLAGS" || v == "MAKESHELL") {
				return runs(w, "every recipe through what it sets")
			}
		}
	case "zip":
		for _, w := range args {
			if w == "--" {
				break
			}
			long, _, _ := strings.Cut(w, "=")
			if isShortCluster(w) && strings.Contains(w, "TT") || strings.HasPrefix(w, "-TT") || strings.HasPrefix(long, "--unz") && abbreviates(long, "--unzip-command") {
				return runs(w, "a command to test the archive")
			}
		}
	case "rsync":
		for _, o := range readOptions(args, "BefMT@", "--rsh", "--rsync-path") {
			switch {
			case o.name == "-e" || abbreviates(o.name, "--rsh"):
				return runs(o.name+" "+o.value, "a remote shell command on this machine")
			case abbreviates(o.name, "--rsync-path"):
				return runs(o.name+" "+o.value, "a command in place of rsync")
			}
		}
	case "man":
		for _, o := range readOptions(args, "CEeLMmpPrRSs", "--pager", "--config-file") {
			switch {
			case o.name == "-P" || abbreviates(o.name, "--pager"):
				// man -P cat is how a page is read without a terminal.
				if !harmlessCommands[o.value] {
					return runs(o.name+" "+o.value, "a pager it is given")
				}
			case o.name == "-C" || abbreviates(o.name, "--config-file"):
				return runs(o.name+" "+o.value, "the programs a configuration file names")
			case abbreviates(o.name, "--html") && o.value != "":
				return runs(o.name+"="+o.value, "a browser it is given")
			case o.name == "-H":
				// -H takes its browser only attached (-Hfirefox); readOptions
				// read the rest of the cluster as options, so any letter
				// after H is a browser's name.
				for _, w := range args {
					if isShortCluster(w) && strings.Contains(w, "H") && !strings.HasSuffix(w, "H") {
						return runs(w, "a browser it is given")
					}
				}
			}
		}
	case "strace":
		for _, o := range readOptions(args, "abeEIoOpPsSuUX", "--output", "--env") {
			switch {
			case o.name == "-o" || abbreviates(o.name, "--output"):
				if strings.HasPrefix(o.value, "|") || strings.HasPrefix(o.value, "!") {
					return runs(o.name+" "+o.value, "a command its trace is piped to")
				}
			case o.name == "-E" || abbreviates(o.name, "--env"):
				if v, _, _ := strings.Cut(o.value, "="); codeEnv[v] {
					return runs(o.name+" "+o.value, "the code "+v+" names")
				}
			}
		}
	case "ssh", "scp", "sftp", "slogin":
		return sshRisk(name, args, runs)
	}
	return ""
}

// tarRisk finds tar's options that run a program: the command each
// member is piped to, checkpoint actions that execute, a compression
// program, the scripts run at the end of a volume, and the remote shell.
// In the old style (tar cfI a.tar prog) the first word is a cluster
// without its dash.
func tarRisk(args []string, runs func(opt, what string) string) string {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.ContainsAny(args[0], "IF") {
		return runs(args[0], "a program its options name (I or F)")
	}
	long := []string{"--to-command", "--checkpoint-action", "--use-compress-program", "--info-script", "--new-volume-script", "--rsh-command", "--rmt-command"}
	for _, o := range readOptions(args, "bCfFgHIKLNTVX", append(long, "--file", "--directory", "--files-from", "--exclude-from", "--listed-incremental", "--format", "--label", "--starting-file", "--newer", "--tape-length")...) {
		switch {
		case o.name == "-I" || abbreviates(o.name, "--use-compress-program"):
			return runs(o.name+" "+o.value, "a compression program it is given")
		case o.name == "-F" || abbreviates(o.name, "--info-script") || abbreviates(o.name, "--new-volume-script"):
			return runs(o.name+" "+o.value, "a script at the end of each volume")
		case abbreviates(o.name, "--to-command"):
			return runs(o.name+" "+o.value, "a command for each file it extracts")
		case abbreviates(o.name, "--checkpoint-action", "--checkpoint"):
			if strings.Contains(o.value, "exec") || o.value == "" {
				return runs(o.name+"="+o.value, "a command at each checkpoint")
			}
		case abbreviates(o.name, "--rsh-command") || abbreviates(o.name, "--rmt-command"):
			return runs(o.name+" "+o.value, "a remote shell command on this machine")
		}
	}
	return ""
}

// safeSSHOptions are ssh settings (-o Key=value, compared without case)
// that name no program for ssh to run or library to load.
var safeSSHOptions = map[string]bool{
	"port": true, "user": true, "hostname": true, "identityfile": true, "identitiesonly": true,
	"stricthostkeychecking": true, "userknownhostsfile": true, "globalknownhostsfile": true,
	"batchmode": true, "connecttimeout": true, "connectionattempts": true, "serveraliveinterval": true,
	"serveralivecountmax": true, "tcpkeepalive": true, "loglevel": true, "compression": true,
	"passwordauthentication": true, "pubkeyauthentication": true, "kbdinteractiveauthentication": true,
	"preferredauthentications": true, "hostkeyalias": true, "checkhostip": true, "hashknownhosts": true,
	"updatehostkeys": true, "visualhostkey": true, "addressfamily": true, "requesttty": true,
	"controlmaster": true, "controlpath": true, "controlpersist": true, "exitonforwardfailure": true,
	"ciphers": true, "macs": true, "kexalgorithms": true, "hostkeyalgorithms": true,
	"pubkeyacceptedalgorithms": true, "pubkeyacceptedkeytypes": true, "numberofpasswordprompts": true,
	"ipqos": true, "escapechar": true, "sendenv": true, "setenv": true, "addkeystoagent": true,
}

// sshRisk finds what makes ssh, scp or sftp run a program on this
// machine: a setting outside a short safe list (ProxyCommand,
// LocalCommand, KnownHostsCommand, PKCS11Provider…), a configuration
// file (which can hold any of them), a PKCS#11 library, scp's and sftp's
// -S program and -D server, and sftp's batch file, whose ! lines run
// local commands.
func sshRisk(name string, args []string, runs func(opt, what string) string) string {
	valued := "BbcDEeFIiJLlmOoPpQRSWw"
	switch name {
	case "scp":
		valued = "cDFiJloPSX"
	case "sftp":
		valued = "BbcDFiJloPRSsX"
	}
	for _, o := range readOptions(args, valued) {
		switch o.name {
		case "-o":
			key := strings.ToLower(strings.TrimSpace(o.value))
			if i := strings.IndexAny(key, "= \t"); i >= 0 {
				key = key[:i]
			}
			if !safeSSHOptions[key] {
				return runs("-o "+o.value, "what the setting names (ProxyCommand, LocalCommand and others run commands here)")
			}
		case "-F":
			if o.value != "/dev/null" && o.value != "none" {
				return runs("-F "+o.value, "the commands its configuration file may name (ProxyCommand, LocalCommand)")
			}
		case "-I":
			if name == "ssh" || name == "slogin" {
				return runs("-I "+o.value, "code from a PKCS#11 library")
			}
		case "-S", "-D":
			if name == "scp" || name == "sftp" {
				return runs(o.name+" "+o.value, "a program in place of ssh or the sftp server")
			}
		case "-b":
			if name == "sftp" {
				return runs("-b "+o.value, "a batch file, whose ! lines are shell commands")
			}
		}
	}
	return ""
}

// pushRisk says why a git push deletes or overwrites what is on the
// remote: --force in any spelling (-f in a cluster, --force-with-lease),
// a +ref refspec, a :ref refspec or --delete (which delete the branch),
// and --mirror and --prune (which delete the remote's refs that are not
// here). Such pushes ask in every mode, wherever git's own options put
// the subcommand (git -C dir push).
func pushRisk(words []string) string {
	if base(words[0]) != "git" {
		return ""
	}
	i := 1
	for ; i < len(words) && strings.HasPrefix(words[i], "-"); i++ {
		switch words[i] {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path", "--super-prefix", "--list-cmds":
			i++
		}
	}
	if i >= len(words) || words[i] != "push" {
		return ""
	}
	const why = "it pushes in a way that overwrites or deletes branches on the remote (%s); forced and deleting pushes always ask"
	say := func(w string) string { return strings.Replace(why, "%s", shorten(w, 30), 1) }
	operands := false
	for _, w := range words[i+1:] {
		switch {
		case operands || !strings.HasPrefix(w, "-"):
			if strings.HasPrefix(w, "+") || strings.HasPrefix(w, ":") && len(w) > 1 {
				return say(w)
			}
		case w == "--":
			operands = true
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(w, "=")
			// --fo and --pr are ambiguous (--follow-tags, --progress), so
			// git refuses them; asking for them costs nothing.
			for _, full := range []string{"--force", "--force-with-lease", "--force-if-includes", "--delete", "--mirror", "--prune"} {
				if abbreviates(name, full) && len(name) >= 4 {
					return say(w)
				}
			}
		default:
			// A short cluster: -o takes the rest as a push option.
			for _, c := range w[1:] {
				if c == 'o' {
					break
				}
				if c == 'f' || c == 'd' {
					return say(w)
				}
			}
		}
	}
	return ""
}
