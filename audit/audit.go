package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// Defaults of the Options fields.
const (
	DefaultMaxPages    = 500
	DefaultConcurrency = 4
	DefaultTimeout     = 10 * time.Second
	DefaultMaxBytes    = 5 << 20
)

// Severities of a Finding.
const (
	Error   = "error"
	Warning = "warning"
)

// Options configures an audit. The zero value of every field but Config
// (in-process mode) or Live works.
type Options struct {
	// Config holds the rules the in-process mode applies, and the base URL
	// (site.base_url): in live mode too, links and canonicals on the base
	// URL's origin count as the crawled site's own (a staging copy names
	// its production original). nil in live mode: only Live's origin is
	// the site.
	Config *rules.Config
	// Live is the URL of a running site, crawled as it answers. "": the
	// in-process mode, which asks Handler — headgate's own request
	// pipeline — for every page, as a client would ask headgate.
	Live string
	// Handler, in the in-process mode, is headgate's request pipeline for
	// Config: cmd builds it with proxy.New, so that the audit reads exactly
	// what headgate serves (400s, deny, its own files, redirects, rewrites,
	// headers) and decides nothing itself. For a staging config, cmd builds
	// it with the production mode: the checks judge what production will
	// send, and the audit marks the responses noindex itself (§6).
	Handler http.Handler
	// Observe, in the in-process mode, returns a context whose requests
	// report to fn what the handler did: the outcome, the upstream's head
	// bytes and the rewrite's result (proxy.Observe, through
	// app.AuditObserve). nil: pages carry no change record.
	Observe func(ctx context.Context, fn func(outcome string, upstream []byte, res *rewrite.Result)) context.Context
	// Upstream is the in-process mode's upstream base URL, so that a
	// redirect the upstream answers with its own origin is read as the
	// site's. "": the config's server.upstream.
	Upstream string
	// Transport makes every request. nil: a transport of its own (proxy
	// from the environment, keep-alives, gzip). Redirects are never
	// followed by the client: the crawl records them.
	Transport http.RoundTripper
	// MaxPages bounds the URLs fetched (pages, redirects, errors; not the
	// sitemap files and robots.txt). 0: DefaultMaxPages.
	MaxPages int
	// Concurrency is the number of requests under way at once. 0:
	// DefaultConcurrency.
	Concurrency int
	// Timeout bounds each request, from sending it to the last byte of its
	// body read. 0: DefaultTimeout.
	Timeout time.Duration
	// MaxBytes is how much of a page (decoded) is read; a longer page is
	// cut there, checked as far as it was read, and noted in Skipped. 0:
	// DefaultMaxBytes.
	MaxBytes int64
	// Progress, when set, receives a status line ("\rpages 120/340 queued,
	// 17 findings") at most ten times a second, and a final newline.
	Progress io.Writer
	// Logger receives one debug line per fetch. nil: discard.
	Logger *slog.Logger
	// Compare, when set, is the URL of a second site (production): once
	// the crawl is done, every crawled path is fetched there too, and the
	// differences are diff-* findings (SPEC §15).
	Compare string
}

// Finding is one problem on one page.
type Finding struct {
	Check    string `json:"check"`    // a check ID, e.g. "canonical-missing"
	Severity string `json:"severity"` // Error or Warning
	URL      string `json:"url"`      // the page that holds the problem
	Detail   string `json:"detail"`   // what is wrong; names the other page of a two-page finding
	// Status is, once a baseline is applied (ApplyBaseline), StatusNew or
	// StatusKnown; "" without a baseline.
	Status string `json:"status,omitempty"`
}

// Statuses of a Finding against a baseline (SPEC §15).
const (
	StatusNew   = "new"
	StatusKnown = "known"
)

// RobotsInfo is what the crawl read of robots.txt.
type RobotsInfo struct {
	URL         string `json:"url"`
	Status      int    `json:"status"`                 // 0: no answer
	Error       string `json:"error,omitempty"`        // why there was no answer
	ContentType string `json:"content_type,omitempty"` // as served
	Bytes       int64  `json:"bytes"`                  // bytes read, at most 500 KiB
	Lines       int    `json:"lines"`                  // lines read
	Rules       int    `json:"rules"`                  // Allow and Disallow rules for *
	GoogleRules int    `json:"googlebot_rules"`        // Allow and Disallow rules for Googlebot
	Sitemaps    int    `json:"sitemaps"`               // Sitemap lines
	SHA256      string `json:"sha256,omitempty"`       // of the bytes read, hex
}

// Page is one fetched URL.
type Page struct {
	URL       string
	Status    int    // 0: no answer (the reason is in Skipped)
	Location  string // a redirect's target, absolute
	Canonical string // the canonical crawlers read (head tag, else Link header), absolute
	// Outcome is, in the in-process mode, what headgate did with the
	// request: the outcome label of headgate_requests_total, from the proxy
	// itself ("rewritten", "passthrough", "skipped_fragment", "redirected",
	// "denied", "bad_request", "sitemap", "robots", "upstream_error", …;
	// docs/operations.md lists them); "" in live mode.
	Outcome string
	Changes []rewrite.Change // in-process mode: what headgate wrote, replaced, corrected, dropped
	// Redirects is, for a redirect, every hop from this URL on: the URLs it
	// leads through, ending at the first that does not redirect (or where
	// the crawl stopped following).
	Redirects []string
	// BodyHash is the FNV-1a hash (16 hex digits) of the body's text,
	// whitespace-normalized; "" for a page with no body text or no HTML.
	BodyHash string
	// UpstreamHead and ServedHead are, in the in-process mode, the head
	// the upstream sent and the head headgate serves (each up to
	// maxHeadShown bytes), for the first maxHeadsKept pages headgate
	// changes.
	UpstreamHead, ServedHead string
}

// Skip is something the crawl did not look at, or looked at only in part.
type Skip struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

// Report is the result of an audit. Run returns its slices sorted:
// findings by check, URL and detail; pages by URL; skips by URL and reason.
type Report struct {
	Findings []Finding
	Pages    []Page
	Skipped  []Skip
	Robots   *RobotsInfo // what robots.txt answered; nil when it was not asked
	// Fixed lists the findings of the baseline that this run no longer
	// finds; Baseline is set once ApplyBaseline ran. NotRechecked lists the
	// baseline's findings on pages the baseline crawled and this run did
	// not (-max-pages, a link gone): neither fixed nor found.
	Fixed        []Finding
	NotRechecked []Finding
	Baseline     bool
	// Experiment is set by ApplyExperiment: the findings per group.
	Experiment *ExperimentSummary
}

// Fails reports whether the report has a finding at or above level:
// "error" fails on errors, "warning" on errors and warnings, "never" never.
// Any other level acts as "error".
//
// Once a baseline is applied, only new findings count: a gate that fails
// on regressions, not on old debt.
func (r *Report) Fails(level string) bool {
	if level == "never" {
		return false
	}
	for _, f := range r.Findings {
		if r.Baseline && f.Status != StatusNew {
			continue
		}
		if level == Warning || f.Severity == Error {
			return true
		}
	}
	return false
}

// ValidLevel reports whether level is a -fail-on value Fails knows.
func ValidLevel(level string) bool {
	return level == Error || level == Warning || level == "never"
}

// Run crawls the site and checks every page it reaches. start lists paths
// or absolute URLs on the site. In live mode the crawl starts from "/",
// the sitemap and start; in the in-process mode from start, else from "/"
// and the sitemap (which is read in any case, for the sitemap checks).
//
// When ctx ends, Run stops fetching and returns what it found so far with
// ctx's error.
func Run(ctx context.Context, o Options, start []string) (*Report, error) {
	c, err := newCrawler(o)
	if err != nil {
		return nil, err
	}
	return c.run(ctx, start)
}

func (o *Options) defaults() {
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Transport == nil {
		o.Transport = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			MaxIdleConnsPerHost:   o.Concurrency,
			IdleConnTimeout:       30 * time.Second,
			TLSHandshakeTimeout:   o.Timeout,
			ResponseHeaderTimeout: o.Timeout,
			ForceAttemptHTTP2:     true,
		}
	}
}

// siteFor works out which origins are the site's and where pages are
// fetched from.
func siteFor(o *Options) (*site, error) {
	var s site
	if o.Live != "" {
		u, err := url.Parse(o.Live)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("audit: live URL %q is not an http(s) URL", o.Live)
		}
		s.add(originOf(u))
		if p := u.EscapedPath(); p != "" && p != "/" {
			s.livePath = p
			if u.RawQuery != "" {
				s.livePath += "?" + u.RawQuery
			}
		}
		if o.Config != nil && o.Config.Site.BaseURL != "" {
			b, err := url.Parse(o.Config.Site.BaseURL)
			if err == nil && b.Host != "" {
				s.add(originOf(b))
			}
		}
		return &s, nil
	}
	if o.Config == nil || o.Handler == nil {
		return nil, errors.New("audit: the in-process mode needs a Config and headgate's Handler (or set Live)")
	}
	b, err := url.Parse(o.Config.Site.BaseURL)
	if err != nil || b.Host == "" {
		return nil, fmt.Errorf("audit: base URL %q is not an absolute URL", o.Config.Site.BaseURL)
	}
	s.add(originOf(b))
	up := o.Upstream
	if up == "" {
		up = o.Config.Server.Upstream
	}
	if u, err := url.Parse(up); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		s.upstream = u
		s.upstreamOrigin = originOf(u)
	}
	return &s, nil
}
