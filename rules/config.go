package rules

import (
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/headgate/headgate/bots/botconfig"
	"github.com/headgate/headgate/rules/pattern"
	"github.com/headgate/headgate/rules/watchconf"
)

// Mode is site.mode.
type Mode string

// The modes of §6.
const (
	ModeProduction Mode = "production"
	ModeStaging    Mode = "staging"
	ModeShadow     Mode = "shadow"
)

// Policy says whether rule values replace the upstream's tags or only fill
// the ones the upstream lacks.
type Policy string

// The policies of §4.4.
const (
	Override Policy = "override"
	Fill     Policy = "fill"
)

// Config is a loaded, validated and compiled configuration. It is immutable:
// a reload builds a new one.
type Config struct {
	File string // path as given to Load
	Dir  string // directory that file: sources are relative to
	Hash string // 16 hex digits over the file, its overrides and its data files: part of rewritten ETags
	// Files are the data files (tables) the config read, as opened: a
	// change to any of them reloads the config like a change to File.
	Files   []string
	Server  Server
	Site    Site
	Sitemap Sitemap
	Robots  RobotsTxt
	Rules   []*Rule // in file order

	LLMSTxt  *LLMSTxt  // [llms_txt]; nil when the file has none
	IndexNow *IndexNow // [indexnow]; nil when the file has none
	Markdown *Markdown // [markdown] (§19.1); nil when absent or not enabled

	Normalize      Normalize        // [normalize] (§11.1)
	Inspector      Inspector        // [inspector] (§23)
	TableLimits    TableLimits      // [tables] (§23)
	Redirects      []*RedirectRule  // [[redirect]], in file order
	RedirectTables []*RedirectTable // [[redirect_table]], in file order

	Bots botconfig.Config // [bots] (§18), over botconfig.Defaults; checked by botconfig.Config.Check at load
	// Watch is [watch] (§20.2), over watchconf.Defaults; checked by
	// watchconf.Config.Check at load (watch_load.go).
	Watch watchconf.Config

	table *table
	base  *url.URL // the origin with path "/", parsed once
	data  *dataSet // the data tables of §12 (dataload.go); nil when none

	redir *redirector // nil when nothing redirects
	// matches is the one pool of Matches, for PooledMatch and the
	// redirector's rule lookup; nil (a Config not made by Parse): allocate.
	matches *sync.Pool

	experiments []*Experiment    // [[experiment]] (experiment.go), in file order
	now         func() time.Time // the clock experiments read; nil: time.Now
	phaseHashes []string         // ETagHash by experiment boundaries passed; nil: Hash

	pageMeta []string // meta names templates read (rules/tmplpage.go)
	pageLang bool     // some template reads {page.lang}
}

// Server is the [server] table.
type Server struct {
	Listen          string        // default ":8080"
	AdminListen     string        // default "127.0.0.1:9090"
	Upstream        string        // required: an http(s) URL, "builtin:demo" or "builtin:next"
	PreserveHost    bool          // default true
	UpstreamTimeout time.Duration // default 30s
	MaxHeadBytes    int           // bytes, default 256 KiB
	ShutdownTimeout time.Duration // default 15s
	Compress        []string      // default ["zstd", "gzip", "br"]
	AccessLog       bool          // default true
	ChangeHeader    bool          // default false
	// UpstreamPageCoding is what a request for a page headgate will
	// rewrite asks of the upstream: UpstreamPageIdentity (the default) or
	// UpstreamPageClient.
	UpstreamPageCoding string
	// AdminHosts are the names, besides IP literals and localhost, whose
	// Host the admin listener answers (§23); lower case, no trailing dot,
	// no port. Default none.
	AdminHosts []string

	MaxIdleConnections int // default DefaultMaxIdleConnections; 0: no limit
	// TrustedProxies are the peers whose X-Forwarded-For/-Proto and
	// Forwarded headers are believed (§11.1); default none.
	TrustedProxies []netip.Prefix
}

// server.upstream_page_coding's values. With identity, a GET or HEAD for
// a page headgate will decode and re-encode anyway asks the upstream for
// it uncompressed (no Accept-Encoding), as nginx's sub_filter recipe
// does: compressing it upstream and decompressing it here would be work
// for nothing. With client, it asks for the client's codings that
// headgate decodes, which spares bytes on a slow link to the upstream.
const (
	UpstreamPageIdentity = "identity"
	UpstreamPageClient   = "client"
)

// Site is the [site] table.
type Site struct {
	BaseURL            string // the origin of site.base_url: "https://notes.example"
	Mode               Mode   // default production
	TitleTemplate      string // default "%s"
	Locales            []string
	XDefault           bool // default true
	CorrectUpstream    bool // default true
	OGURLFromCanonical bool // default true

	// PathSafe is site.path_safe compiled (§23): the app's own spelling of
	// the paths headgate builds (self, templated paths, the sitemap's
	// <loc>). Nil when unset: §16.4's spelling.
	PathSafe *pattern.Safe
}

// SpellPath spells an escaped path (no query) as every address headgate
// builds spells it: site.path_safe's spelling when it is set, else p.
func (c *Config) SpellPath(p string) string { return c.Site.PathSafe.Spell(p) }

// spellURLPath spells the path of a URL field's value by SpellPath: a
// path ("/…") or an absolute URL on base_url's origin; anything else (and
// every value when site.path_safe is unset) is returned as it is.
func (c *Config) spellURLPath(s string) string {
	if c.Site.PathSafe == nil {
		return s
	}
	prefix, rest := "", s
	switch {
	case strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
	case c.Site.BaseURL != "" && strings.HasPrefix(s, c.Site.BaseURL+"/"):
		prefix, rest = c.Site.BaseURL, s[len(c.Site.BaseURL):]
	default:
		return s
	}
	end := strings.IndexAny(rest, "?#")
	if end < 0 {
		end = len(rest)
	}
	return prefix + c.SpellPath(rest[:end]) + rest[end:]
}

// Sitemap is the [sitemap] table.
type Sitemap struct {
	CacheTTL       time.Duration // default 5m
	RetryAfter     time.Duration // default 30s
	MaxURLsPerFile int           // default and maximum 50 000
	MaxURLs        int           // default 1 000 000
}

// RobotsTxt is the [robots] table.
type RobotsTxt struct {
	Mode string // "generate" (default), "append" or "upstream"

	Groups           []RobotsGroup  // [[robots.group]], in file order
	ContentSignal    *ContentSignal // nil: no Content-Signal line
	UpstreamSitemaps string         // "replace" (default, also "") or "keep"
}

// BuiltinDemo is the upstream value that serves the embedded demo site.
const BuiltinDemo = "builtin:demo"

// BuiltinNext is the upstream value of headgate used as a library
// (proxy.Middleware, the Caddy module): the handler it wraps serves what
// would go upstream, in process. `headgate serve` refuses it.
const BuiltinNext = "builtin:next"

// DefaultMaxHeadBytes is server.max_head_bytes when the file does not set it.
const DefaultMaxHeadBytes = 256 << 10

func defaults() Config {
	return Config{
		Bots:  botconfig.Defaults(),
		Watch: watchconf.Defaults(),
		Server: Server{
			Listen:          ":8080",
			AdminListen:     "127.0.0.1:9090",
			PreserveHost:    true,
			UpstreamTimeout: 30 * time.Second,
			MaxHeadBytes:    DefaultMaxHeadBytes,
			ShutdownTimeout: 15 * time.Second,
			Compress:        []string{"zstd", "gzip", "br"}, // by measured cost: docs/performance.md, "Encodings"
			AccessLog:       true,

			UpstreamPageCoding: UpstreamPageIdentity,

			MaxIdleConnections: DefaultMaxIdleConnections,
		},
		TableLimits: TableLimits{MaxCellBytes: DefaultMaxCellBytes},
		Site: Site{
			Mode:               ModeProduction,
			TitleTemplate:      "%s",
			XDefault:           true,
			CorrectUpstream:    true,
			OGURLFromCanonical: true,
		},
		Sitemap: Sitemap{
			CacheTTL:       5 * time.Minute,
			RetryAfter:     30 * time.Second,
			MaxURLsPerFile: 50000,
			MaxURLs:        1000000,
		},
		Robots: RobotsTxt{Mode: "generate"},
	}
}

// Rule is one [[rule]] table. Fields that the file does not set are nil
// (or false), so that merging can tell "unset" from "set to empty".
type Rule struct {
	Index   int    // position among the file's rules, from 0
	Line    int    // line of its [[rule]] header
	Match   string // the pattern as written
	Pattern *Pattern

	Title        *Template
	Description  *Template
	Canonical    *Template // "self" is kept as the literal "self"
	KeepQuery    []string
	keepQuery    bool // KeepQuery was set
	Robots       *Robots
	OpenGraph    *OpenGraph
	Twitter      *Twitter
	JSONLD       []any    // trees of map[string]any, []any, *Template and JSON scalars
	jsonStatic   [][]byte // JSONLD[i] serialized once when it names no variable
	jsonSize     []int    // a capacity that holds JSONLD[i] serialized, on most pages
	jsonCompiled []any    // JSONLD[i] with its objects' keys sorted once
	ReplaceJSON  bool     // replace_json_ld
	Headers      []Header
	Localized    bool
	Policy       Policy // "" when unset

	Sitemap        bool
	SitemapSource  string // "upstream:/path" or "file:path", as written
	SitemapEntries []Entry
	Deny           bool

	lookups []lookup // lookup: the tables its templates read (dataload.go)
	// SPEC §16 (rules/cms.go): nil is unset.
	Rewrite *bool       // rewrite = false: proxied, never rewritten
	Inherit *bool       // inherit = false: the merge starts afresh here
	Query   []QueryCond // query conditions, by key

	exp           *Experiment    // not nil: the variant of this experiment (experiment.go)
	ContentSignal *ContentSignal // content_signal (§19.2); nil is unset
}

// Robots is a rule's robots table.
type Robots struct {
	Index      *bool
	Follow     *bool
	Directives []string
	directives bool // Directives was set
}

// OpenGraph is a rule's open_graph table; nil fields are unset.
type OpenGraph struct {
	Title, Description, Type, URL, SiteName, Locale *Template
	Image                                           []Image // nil: unset
	Article                                         *Article
}

// Image is one og:image with its structured properties.
type Image struct {
	URL, Alt, Type, SecureURL *Template
	Width, Height             int // 0: unset

	width, height string // Width and Height written out once, at load
}

// Article is open_graph.article.
type Article struct {
	PublishedTime, ModifiedTime, ExpirationTime, Section *Template
	Authors, Tags                                        []*Template
}

// Twitter is a rule's twitter table; nil fields are unset.
type Twitter struct {
	Card, Site, Creator, Title, Description, URL *Template
	Image                                        []TwitterImage // nil: unset
}

// TwitterImage is one twitter:image and its alt text.
type TwitterImage struct {
	URL, Alt *Template
}

// Header is one response header a rule sets. Name is lower-case.
type Header struct {
	Name  string
	Value *Template
}

// Entry is one sitemap_entries item, or one line of a sitemap source.
type Entry struct {
	Params  map[string]string
	Lastmod string // as written; the sitemap normalises it
}

// TableLimits bounds the data tables of §11.2 and §12 (§23).
type TableLimits struct {
	// MaxCellBytes bounds one cell of any table: a longer one is its
	// table's problem at load (HG175, HG176, HG177, HG180). Default
	// DefaultMaxCellBytes (8 KiB); a redirect row's to is bounded at 2 KiB
	// or this, whichever is smaller.
	MaxCellBytes int
}

// Inspector is the [inspector] table.
type Inspector struct {
	// ImageHosts are the hosts ("name" or "name:port", lower case), besides
	// base_url's origin, from which the inspector's link card loads an
	// image (§23). Default none.
	ImageHosts []string
}
