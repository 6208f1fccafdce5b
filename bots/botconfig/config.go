package botconfig

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Duration is a TOML duration string ("150ms", "6h").
type Duration struct{ time.Duration }

// UnmarshalText reads a Go duration; a bad one is a decode error, which
// the loader reports as HG203 at the key's line.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration back.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Config is `[bots]`. Decode over Defaults(); every field's comment says
// its default.
type Config struct {
	// Enabled is the caller's switch (default false: no identity, no
	// header, no access rules); New does not read it.
	Enabled bool `toml:"enabled"`
	// RangesDir holds `<crawler>.json` range files (default "": no ranges).
	// Relative paths are the loader's business (relative to the config file).
	RangesDir   string   `toml:"ranges_dir"`
	RefreshURLs bool     `toml:"refresh_urls"` // default false
	Refresh     Duration `toml:"refresh"`      // default 24h; at least 1m
	ReverseDNS  bool     `toml:"reverse_dns"`  // default true
	Resolver    string   `toml:"resolver"`     // "host:port"; default "" = the system's
	DNSWait     Duration `toml:"dns_wait"`     // default 150ms; at most 5s; 0 = never wait (a first request is unverified)
	CacheSize   int      `toml:"cache_size"`   // default 100000 addresses; 1..10,000,000
	CacheTTL    Duration `toml:"cache_ttl"`    // default 6h; 1m..7d
	WebBotAuth  bool     `toml:"web_bot_auth"` // default true
	// UpstreamHeader is the request header the identity is sent upstream in
	// (default "": none; SPEC uses "Headgate-Bot").
	UpstreamHeader string `toml:"upstream_header"`
	Spoofed        string `toml:"spoofed"`        // "" (default: allow) | "allow" | "deny"
	EnforceRobots  bool   `toml:"enforce_robots"` // default false
	// InsecureDirectories are agent origins ("http://127.0.0.1:8080")
	// whose key directory may be fetched over plain http; tests only.
	InsecureDirectories []string            `toml:"insecure_directories"`
	Access              []AccessRule        `toml:"access"`
	Crawler             []Crawler           `toml:"crawler"`
	Categories          map[string]Category `toml:"categories"` // crawler name → category override
}

// AccessRule is one `[[bots.access]]`.
type AccessRule struct {
	Crawlers []string `toml:"crawlers"` // names, "@category", or "*" (any identified crawler)
	Verified string   `toml:"verified"` // "any" (default) | "yes" | "no"
	Match    string   `toml:"match"`    // §2.2 path pattern; default "" = every path
	Action   string   `toml:"action"`   // "allow" | "deny"
}

// Defaults returns the documented defaults.
func Defaults() Config {
	return Config{
		Refresh:    Duration{24 * time.Hour},
		ReverseDNS: true,
		DNSWait:    Duration{150 * time.Millisecond},
		CacheSize:  100_000,
		CacheTTL:   Duration{6 * time.Hour},
		WebBotAuth: true,
	}
}

// Problem is one thing wrong with `[bots]`: an HG2xx code, the key path
// ("bots.access[2].crawlers") and what is wrong. The loader adds the file
// and line (it owns them) and converts it into its own problem type.
type Problem struct {
	Code    string
	Key     string
	Message string
}

func (p Problem) String() string { return fmt.Sprintf("%s %s: %s", p.Code, p.Key, p.Message) }

// The codes; docs/bots.md lists them with examples.
const (
	HGRangesFile   = "HG200" // a range file that does not parse (or cannot be read)
	HGUnknownName  = "HG201" // an unknown crawler name or @category
	HGBadCrawler   = "HG202" // a [[bots.crawler]] entry that is not valid
	HGBadDuration  = "HG203" // a duration out of its bounds
	HGBadSize      = "HG204" // cache_size out of its bounds
	HGNoCrawlers   = "HG205" // an access entry with no crawlers
	HGBadAction    = "HG206" // action not allow|deny, or spoofed not allow|deny
	HGBadVerified  = "HG207" // verified not yes|no|any
	HGBadResolver  = "HG208" // resolver not host:port
	HGBadDirectory = "HG209" // an insecure_directories entry or header name that is not valid
)

// Check returns every problem in c, reading the range files in RangesDir
// (reading is not a side effect). The directory it checks names against is
// the built-in one merged with c.Crawler. match patterns are checked by
// the caller, which owns the §2.2 syntax.
func (c *Config) Check() []Problem {
	var ps []Problem
	add := func(code, key, format string, args ...any) {
		ps = append(ps, Problem{code, key, fmt.Sprintf(format, args...)})
	}
	dir := Merge(Directory(), c.Crawler, nil)
	names := make(map[string]bool, len(dir))
	for _, d := range dir {
		names[d.Name] = true
	}
	for i, cr := range c.Crawler {
		key := fmt.Sprintf("bots.crawler[%d]", i)
		if !validToken(cr.Name) || strings.ToLower(cr.Name) != cr.Name {
			add(HGBadCrawler, key+".name", "%q: a name is 3-64 lower-case letters, digits, - or _", cr.Name)
		}
		for j, t := range cr.Tokens {
			if !validToken(t) {
				add(HGBadCrawler, fmt.Sprintf("%s.tokens[%d]", key, j), "%q: a token is one word of 3-64 letters, digits, - or _", t)
			}
		}
		if cr.Category != "" && !KnownCategory(cr.Category) {
			add(HGUnknownName, key+".category", "unknown category %q (want one of %s)", cr.Category, categoryList())
		}
		if cr.RangesFormat != "" && cr.RangesFormat != FormatPrefixes {
			add(HGBadCrawler, key+".ranges_format", "unknown format %q (want %q)", cr.RangesFormat, FormatPrefixes)
		}
		if cr.RangesURL != "" {
			if u, err := url.Parse(cr.RangesURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				add(HGBadCrawler, key+".ranges_url", "%q is not an http(s) URL", cr.RangesURL)
			}
		}
		if cr.SignatureAgent != "" {
			if _, err := AgentOrigin(cr.SignatureAgent); err != nil {
				add(HGBadCrawler, key+".signature_agent", "%q: %v", cr.SignatureAgent, err)
			}
		}
	}
	for i, cr := range c.Crawler {
		if cr.Category == "" && !slices.ContainsFunc(builtin, func(b Crawler) bool { return b.Name == strings.ToLower(cr.Name) }) {
			add(HGBadCrawler, fmt.Sprintf("bots.crawler[%d].category", i), "a new crawler needs a category (one of %s)", categoryList())
		}
	}
	for name, cat := range c.Categories {
		if !names[strings.ToLower(name)] {
			add(HGUnknownName, "bots.categories."+name, "unknown crawler %q", name)
		}
		if !KnownCategory(cat) {
			add(HGUnknownName, "bots.categories."+name, "unknown category %q (want one of %s)", cat, categoryList())
		}
	}
	if d := c.Refresh.Duration; d != 0 && (d < time.Minute || d > 30*24*time.Hour) {
		add(HGBadDuration, "bots.refresh", "%s: want 1m to 720h", d)
	}
	if d := c.DNSWait.Duration; d < 0 || d > 5*time.Second {
		add(HGBadDuration, "bots.dns_wait", "%s: want 0 to 5s", d)
	}
	if d := c.CacheTTL.Duration; d != 0 && (d < time.Minute || d > 7*24*time.Hour) {
		add(HGBadDuration, "bots.cache_ttl", "%s: want 1m to 168h", d)
	}
	if c.CacheSize < 0 || c.CacheSize > 10_000_000 {
		add(HGBadSize, "bots.cache_size", "%d: want 1 to 10000000 (0 = the default)", c.CacheSize)
	}
	if c.Resolver != "" {
		if host, port, err := net.SplitHostPort(c.Resolver); err != nil || host == "" || port == "" {
			add(HGBadResolver, "bots.resolver", "%q: want host:port", c.Resolver)
		}
	}
	switch c.Spoofed {
	case "", "allow", "deny":
	default:
		add(HGBadAction, "bots.spoofed", "%q: want \"allow\" or \"deny\"", c.Spoofed)
	}
	if h := c.UpstreamHeader; h != "" && !validHeaderName(h) {
		add(HGBadDirectory, "bots.upstream_header", "%q is not a header name", h)
	}
	for i, o := range c.InsecureDirectories {
		if _, err := AgentOrigin(o); err != nil {
			add(HGBadDirectory, fmt.Sprintf("bots.insecure_directories[%d]", i), "%q: %v", o, err)
		}
	}
	for i, a := range c.Access {
		key := fmt.Sprintf("bots.access[%d]", i)
		if len(a.Crawlers) == 0 {
			add(HGNoCrawlers, key+".crawlers", "an access entry names no crawlers")
		}
		for j, n := range a.Crawlers {
			k := fmt.Sprintf("%s.crawlers[%d]", key, j)
			switch {
			case n == "*":
			case strings.HasPrefix(n, "@"):
				if !KnownCategory(Category(n[1:])) {
					add(HGUnknownName, k, "unknown category %q (want one of %s)", n, categoryList())
				}
			default:
				if !names[strings.ToLower(n)] {
					add(HGUnknownName, k, "unknown crawler %q (add it with [[bots.crawler]])", n)
				}
			}
		}
		switch a.Verified {
		case "", "any", "yes", "no":
		default:
			add(HGBadVerified, key+".verified", "%q: want \"yes\", \"no\" or \"any\"", a.Verified)
		}
		switch a.Action {
		case "allow", "deny":
		default:
			add(HGBadAction, key+".action", "%q: want \"allow\" or \"deny\"", a.Action)
		}
	}
	if c.RangesDir != "" {
		ps = append(ps, checkRangesDir(c.RangesDir, dir)...)
	}
	return ps
}

func checkRangesDir(dir string, cs []Crawler) []Problem {
	var ps []Problem
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []Problem{{HGRangesFile, "bots.ranges_dir", fmt.Sprintf("%s: %v", dir, err)}}
	}
	known := make(map[string]bool, len(cs))
	for _, cr := range cs {
		known[cr.Name+".json"] = true
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".json") && !known[n] {
			ps = append(ps, Problem{HGUnknownName, "bots.ranges_dir", fmt.Sprintf(
				"%s: no crawler named %q (a range file is named after its directory entry, like googlebot.json)",
				filepath.Join(dir, n), strings.TrimSuffix(n, ".json"))})
		}
	}
	for _, cr := range cs {
		p := filepath.Join(dir, cr.Name+".json")
		f, err := os.Open(p)
		if err != nil {
			if os.IsNotExist(err) {
				continue // a crawler without a file is verified by its other methods
			}
			ps = append(ps, Problem{HGRangesFile, "bots.ranges_dir", fmt.Sprintf("%s: %v", p, err)})
			continue
		}
		_, err = ParseRanges(f)
		f.Close()
		if err != nil {
			ps = append(ps, Problem{HGRangesFile, "bots.ranges_dir", fmt.Sprintf("%s: %v", p, err)})
		}
	}
	return ps
}

func categoryList() string {
	s := make([]string, len(Categories))
	for i, c := range Categories {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

func validHeaderName(h string) bool {
	for i := 0; i < len(h); i++ {
		if !isTChar(h[i]) {
			return false
		}
	}
	return h != ""
}

// AgentOrigin normalizes a Signature-Agent or configured origin to
// "scheme://host[:port]" (lower-case, default port removed) and refuses
// anything with a path, query, user info or a scheme other than http(s).
func AgentOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("not a URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", fmt.Errorf("want an https origin")
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("want an origin (scheme://host[:port])")
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return u.Scheme + "://" + net.JoinHostPort(host, port), nil
	}
	if strings.Contains(host, ":") {
		return u.Scheme + "://[" + host + "]", nil
	}
	return u.Scheme + "://" + host, nil
}
