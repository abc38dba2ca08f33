// Package assets holds the files infer ships inside its binary.
//
// Each group of files is one embedded directory with one exported variable,
// so that adding a group means adding a directive and a variable here and
// nothing else. The embed.FS values keep their directory prefix (Site holds
// "site/index.html"); the helper functions hand out views rooted inside that
// directory, which is what file servers and callers usually want.
//
// Groups:
//   - site/: the demo site that the fake browser serves at DemoOrigin and the
//     end-to-end tests serve to Chromium (see DemoSiteHandler).
package assets

import (
	"embed"
	"io/fs"
)

// Site is the static part of the demo site, under the "site/" prefix.
//
//go:embed site
var Site embed.FS

// SiteFS returns the demo site's static files rooted at the site directory,
// so that "index.html" names the home page.
func SiteFS() fs.FS {
	sub, err := fs.Sub(Site, "site")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "site" is a constant.
		panic(err)
	}
	return sub
}
