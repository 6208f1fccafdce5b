package robotskey

import "testing"

// The keys Google's parser reads, and some it does not.
func TestKey(t *testing.T) {
	for in, want := range map[string]string{
		"User-agent": "user-agent", "user-agents": "user-agent", "USERAGENT": "user-agent", " User agent ": "user-agent",
		"Allow": "allow", "allowed": "allow",
		"Disallow": "disallow", "Disallowed": "disallow", "Dissallow": "disallow", "Dissalow": "disallow",
		"Disalow": "disallow", "Diasllow": "disallow", "Disallaw": "disallow",
		"Sitemap": "sitemap", "Site-map": "sitemap", "sitemaps": "sitemap",
		"Content-Signal": "content-signal", "Crawl-delay": "crawl-delay", "Disalloww": "disallow",
		"Dis-allow": "dis-allow", "User_agent": "user_agent", "agent": "agent",
	} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
}
