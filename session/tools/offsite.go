package tools

import (
	"fmt"

	"github.com/infer-workspace/infer/session/tools/grants"
)

// A site grant ("always allow BrowserNavigate on http://host-a") is the
// person's word for one site. A page there can redirect anywhere, or a
// click can lead off it, carrying in its URL whatever the agent put in the
// first one; that request has left by the time infer hears the final URL,
// but nothing of the page it reached goes back to the agent, the person is
// told, and reading the tab while it shows that page asks the person.

// grantSite is the site a grant is limited to, or "" for other grants.
func grantSite(g *grants.Grant) string {
	if g.Kind == grants.KindSite {
		return g.Site
	}
	return ""
}

// keepOnSite checks, after a call that a grant for site let through, where
// the tab ended: off the site, the call's result is replaced by a sentence
// naming only where it ended, and the person gets a warning.
func (p *Pipeline) keepOnSite(t Tool, site string, out *Outcome) {
	if !out.Ran {
		return
	}
	page := out.page
	if page == "" {
		page = p.env.pageURL()
	}
	ended := siteOf(page)
	if ended == "" || ended == site {
		return
	}
	p.env.mu.Lock()
	p.env.offSite = page
	p.env.mu.Unlock()
	out.Success = false
	out.Images, out.Artifacts, out.ExitCode = nil, nil, nil
	out.Output = fmt.Sprintf("%s ended on %s, not on %s, the site the saved permission covers (a redirect or a link led off it). "+
		"Nothing of that page is shown, and reading the tab asks the person while it shows it. "+
		"If the page is needed, ask the person to open it or to approve a navigation to %s.", t.Name(), ended, site, ended)
	out.Error = "ended on " + ended + ", off the granted site " + site
	warn := fmt.Sprintf("%s was let through by your saved permission for %s, but the tab ended on %s; the agent was shown nothing of that page. "+
		"Anything in the URL it asked for has reached %s.", t.Name(), site, ended, ended)
	if out.Warning != "" {
		warn = out.Warning + " " + warn
	}
	out.Warning = warn
}

// offSitePage asks the person for a browser tool that would show the agent
// the tab after a site grant's call led it off its site, until the next
// navigation. The tab's URL as the bridge reports it may lag behind, so
// the rule does not depend on it.
func (p *policy) offSitePage(t Tool) (Permission, bool) {
	if !isBrowser(t) {
		return Permission{}, false
	}
	if _, ok := t.(navigateTool); ok {
		return Permission{}, false
	}
	p.env.mu.Lock()
	off := p.env.offSite
	p.env.mu.Unlock()
	if off == "" {
		return Permission{}, false
	}
	return Permission{Kind: Ask, LocalOnly: true, Why: fmt.Sprintf(
		"the tab was led to %s by a call allowed only for another site, and no navigation has happened since; %s would show the agent what the tab shows", siteOf(off), t.Name())}, true
}

// navigated forgets an off-site page once a navigation has run: the tab
// shows something else now (keepOnSite records it again if that one
// ended off its site too).
func (e *Env) navigated() {
	e.mu.Lock()
	e.offSite = ""
	e.mu.Unlock()
}
