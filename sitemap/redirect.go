package sitemap

// reasonRedirected: headgate would answer the address with a redirect
// (SPEC §11.2), so the sitemap leaves it out; the generation's warning for
// the rule counts it.
const reasonRedirected = "redirected"

// redirected reports whether the config redirects path, setting *why.
func (g *generation) redirected(path string, why *string) bool {
	if !g.s.cfg.HasRedirects() || !g.s.cfg.WouldRedirect(path) {
		return false
	}
	*why = reasonRedirected
	return true
}
