package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/infer-workspace/infer/session/netproxy"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// NetworkTool is the name network approvals carry as their call's tool:
// no tool has it, so a grant made for a host is never a tool's grant.
const NetworkTool = "Network"

// NetworkArgs are the arguments of a network approval's call, for front
// ends that draw it.
type NetworkArgs struct {
	// Host is host:port, as the command asked for it.
	Host string `json:"host"`
	// Command is the command (or MCP server) that wants it.
	Command string `json:"command"`
	// Loopback is set when the host is the person's own machine.
	Loopback bool `json:"loopback,omitempty"`
}

// networkShower shows a network approval's call: a confined command
// asking to reach a host through infer's proxy.
type networkShower struct{}

func (networkShower) show(args string) Shown {
	return showAs(args, func(a NetworkArgs) Shown {
		s := Shown{Summary: oneLine(a.Host + " for " + a.Command), Detail: []Part{field("host: ", a.Host), field("for: ", a.Command)}}
		if a.Loopback {
			s.Detail = append(s.Detail, note("a service on your own machine", true))
		}
		return s
	})
}

// netGate decides which hosts one confined command may reach: those in
// network.allow, those a host grant covers, and those the person allows
// when asked. It remembers its answers for the command's lifetime only,
// so "allow once" is once per command, and a refused host is not asked
// about again by the same command.
type netGate struct {
	env      *Env
	grants   *grants.Store
	approver Approver
	call     Call
	mode     Mode
	who      string // what the request names as wanting the host

	mu      sync.Mutex // one question at a time, so one per host
	answers map[string]error
}

// netGateKey carries a call's netGate to the tool that starts the
// command; a command started without one reaches no host at all.
type netGateKey struct{}

func withNetGate(ctx context.Context, g *netGate) context.Context {
	return context.WithValue(ctx, netGateKey{}, g)
}

// netDecider is the decider for the command started under ctx.
func netDecider(ctx context.Context) netproxy.Decider {
	if g, ok := ctx.Value(netGateKey{}).(*netGate); ok && g != nil {
		return g.decide
	}
	return func(_ context.Context, d netproxy.Dest) error {
		return refusal(d, "nobody can approve network access for this command")
	}
}

// NetworkDecider decides the hosts a sandboxed MCP server reaches
// through its proxy (see mcpclient.Options.Network), as for a confined
// command: network.allow, host grants, then the person at infer's
// terminal, remembering answers for the decider's lifetime (one life of
// the server).
func (p *Pipeline) NetworkDecider(server string) netproxy.Decider {
	g := &netGate{env: p.env, grants: p.grants, approver: p.approver,
		call: Call{ID: "mcp-" + server, Origin: OriginAgent},
		who:  "The MCP server " + server}
	return g.decide
}

// refusal is what a refused command is told, naming the host and how to
// allow it.
func refusal(d netproxy.Dest, why string) error {
	host := d.Host
	if d.Loopback {
		host = d.String()
	}
	return fmt.Errorf("infer blocked the connection to %s (%s). To allow it, add %q to network.allow in ~/.infer/config.yaml, or approve it when infer asks in its terminal", d, why, host)
}

func (g *netGate) decide(ctx context.Context, d netproxy.Dest) error {
	if d.Loopback && g.env.ownPort(d.Port) {
		return fmt.Errorf("infer blocked the connection to %s: that port is infer's own browser bridge, which confined commands may never reach, whatever network.allow says", d)
	}
	if HostAllowed(g.env.NetAllow, d) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// The same host asked as the machine's own service (a name that
	// resolved there) is another question than as a host elsewhere.
	key := d.String()
	if d.Loopback {
		key += " (this machine)"
	}
	if err, ok := g.answers[key]; ok {
		return err
	}
	if g.granted(d) {
		return nil
	}
	err := g.ask(ctx, d)
	if ctx.Err() == nil {
		if g.answers == nil {
			g.answers = map[string]error{}
		}
		g.answers[key] = err
	}
	return err
}

// granted reports whether a saved host grant covers d: by host, or for
// the person's own machine by host and port only.
func (g *netGate) granted(d netproxy.Dest) bool {
	if g.grants == nil {
		return false
	}
	list, err := g.grants.List()
	if err != nil {
		return false
	}
	for _, gr := range list {
		if gr.Kind == grants.KindHost && (gr.Host == d.String() || !d.Loopback && gr.Host == d.Host) {
			return true
		}
	}
	return false
}

// ask puts d to the person at infer's terminal; without one it refuses.
func (g *netGate) ask(ctx context.Context, d netproxy.Dest) error {
	if g.approver == nil || !g.env.HostApprovals() {
		return refusal(d, "it is not in network.allow or your saved permissions, and no one is at infer's terminal to approve it")
	}
	grantHost := d.Host
	if d.Loopback {
		grantHost = d.String()
	}
	args, _ := json.Marshal(NetworkArgs{Host: d.String(), Command: g.who, Loopback: d.Loopback})
	why := fmt.Sprintf("%s wants to connect to %s", g.who, d)
	if d.Loopback {
		why += ", a service on your own machine"
	}
	req := ApprovalRequest{
		Call: Call{ID: g.call.ID + "/net/" + d.String(), Name: NetworkTool, Args: string(args), Origin: g.call.Origin},
		Mode: g.mode, Why: why, LocalOnly: true,
		Sandbox: "Allow once lets this command reach " + d.String() + " until it ends; \"Always\" lets every sandboxed command in this project reach " + grantHost + " (revoke it with `infer permissions revoke`).",
	}
	if g.grants != nil {
		req.Options = []GrantOption{{
			Grant: grants.Grant{Kind: grants.KindHost, Tool: NetworkTool, Host: grantHost},
			Label: "Always allow sandboxed commands to reach " + grantHost + " in this project",
		}}
	}
	dec, err := g.approver.Approve(ctx, req)
	switch {
	case err != nil:
		return refusal(d, "the approval failed: "+err.Error())
	case dec.Remote:
		return refusal(d, "the browser panel cannot allow network hosts")
	case dec.Kind == AllowOnce:
		return nil
	case dec.Kind == AllowAlways:
		if len(req.Options) > 0 {
			if _, err := g.grants.Add(req.Options[0].Grant); err != nil {
				return nil // allowed now all the same; the grant is lost
			}
		}
		return nil
	default:
		return refusal(d, "the person refused it")
	}
}

// HostAllowed reports whether network.allow lets confined commands reach
// d. An entry is a host ("example.com"), a host's subdomains
// ("*.example.com"), either with a port ("example.com:8443"), or an
// address. The person's own machine is matched only by an entry naming
// that very host, never by a wildcard.
func HostAllowed(allow []string, d netproxy.Dest) bool {
	for _, e := range allow {
		host, port := splitAllowEntry(e)
		if host == "" || port != 0 && port != d.Port {
			continue
		}
		if host == d.Host {
			return true
		}
		if !d.Loopback && strings.HasPrefix(host, "*.") && strings.HasSuffix(d.Host, host[1:]) {
			return true
		}
	}
	return false
}

// splitAllowEntry parses a network.allow entry; host is "" when it
// cannot be one.
func splitAllowEntry(e string) (host string, port int) {
	e = strings.ToLower(strings.TrimSpace(e))
	host = e
	if h, p, err := net.SplitHostPort(e); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0
		}
		host, port = h, n
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "*" || strings.Contains(host, "/") || strings.ContainsAny(host, " \t") {
		return "", 0
	}
	return host, port
}

// ownPort reports whether port is one infer itself serves on loopback.
func (e *Env) ownPort(port int) bool {
	if e.OwnPorts == nil {
		return false
	}
	return slices.Contains(e.OwnPorts(), port)
}
