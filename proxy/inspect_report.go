package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/watch"
)

// inspectReport is what /inspect shows for one request target; format=json
// is this, encoded.
type inspectReport struct {
	Path        string          `json:"path"`
	URL         string          `json:"url"`
	UpstreamURL string          `json:"upstream_url"` // the same target on the upstream itself
	Decision    inspectDecision `json:"decision"`
	Outcome     string          `json:"outcome"`
	Cached      bool            `json:"cached"`         // the rewrite was replayed from the plan cache (the same head seen before, or one differing only where nothing headgate decides reads)
	Plan        string          `json:"plan,omitempty"` // what the plan cache did: hit, near, miss or skipped (headgate_plan_cache_total)
	Reason      string          `json:"reason,omitempty"`
	Upstream    *inspectStatus  `json:"upstream,omitempty"` // nil: the upstream was not asked, or did not answer
	Served      inspectStatus   `json:"served"`
	// UpstreamHead says where the left column comes from.
	UpstreamHead string           `json:"upstream_head"`
	Heads        []headRow        `json:"heads"`
	HeadEnd      headEnds         `json:"head_end"`
	Changes      []inspectChange  `json:"changes"`
	Search       *searchPreview   `json:"search_preview,omitempty"`
	Card         *cardPreview     `json:"link_card,omitempty"`
	Identity     *inspectIdentity `json:"identity,omitempty"` // with [bots] on (SPEC §18)
	Notes        []string         `json:"notes,omitempty"`
	Error        string           `json:"error,omitempty"`
	Elapsed      string           `json:"elapsed"`
	// Markdown is the inspector's address of the page's Markdown
	// (format=markdown, inspect_markdown.go); "" when it has none.
	Markdown string `json:"markdown,omitempty"`
	// UpstreamChanges are [watch]'s confirmed changes of this page's
	// upstream signals (SPEC §20.2), newest first; none without [watch].
	UpstreamChanges []watch.Event `json:"upstream_changes,omitempty"`
	// UpstreamCoding is what headgate asked the upstream for, of a
	// browser's request for the page, and why (the Record's
	// UpstreamIdentity and UpstreamKeep, server.upstream_page_coding).
	UpstreamCoding string `json:"upstream_coding,omitempty"`
}

// inspectIdentity is who the proxy took the client for, and what [bots]'
// access decided: the Record's Bot, BotRule and BotDenied.
type inspectIdentity struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Verified string `json:"verified"`
	Access   string `json:"access"`         // "allow" or "deny"
	Rule     string `json:"rule,omitempty"` // the entry that decided: "bots.access[2]", "bots.spoofed", "bots.enforce_robots"
	Summary  string `json:"summary"`
}

func reportIdentity(up *Record) *inspectIdentity {
	id := up.Bot
	if id.Name == "" {
		id.Name = "-"
	}
	ri := &inspectIdentity{Name: id.Name, Category: string(id.Category), Verified: string(id.Verified), Access: "allow", Rule: up.BotRule}
	if up.BotDenied {
		ri.Access = "deny"
	}
	switch {
	case !id.Known():
		ri.Summary = "No known crawler: no access rule applies."
	case up.BotDenied:
		ri.Summary = fmt.Sprintf("%s (%s, verified: %s) is denied by %s: headgate answers 403; nothing is forwarded.", id.Name, id.Category, id.Verified, up.BotRule)
	case up.BotRule != "":
		ri.Summary = fmt.Sprintf("%s (%s, verified: %s) is allowed by %s.", id.Name, id.Category, id.Verified, up.BotRule)
	default:
		ri.Summary = fmt.Sprintf("%s (%s, verified: %s): no access rule matches; allowed.", id.Name, id.Category, id.Verified)
	}
	return ri
}

type inspectDecision struct {
	// Kind: "bad_request", "deny", "redirect", "headgate" (sitemap,
	// robots.txt), "rules" or "no_rules".
	Kind     string        `json:"kind"`
	Summary  string        `json:"summary"`
	Status   int           `json:"status,omitempty"`
	Location string        `json:"location,omitempty"`
	By       string        `json:"by,omitempty"` // who answered the redirect: "headgate" or "upstream"
	Rules    []inspectRule `json:"rules"`
	Locale   string        `json:"locale,omitempty"`
	Policy   string        `json:"policy,omitempty"`
	// Experiment and Group: the split test covering the page and its
	// group, "control" or "variant" (SPEC §21), from the Record.
	Experiment string `json:"experiment,omitempty"`
	Group      string `json:"group,omitempty"`
}

type inspectRule struct {
	Pattern string         `json:"pattern"`
	Where   string         `json:"where"` // file:line of its [[rule]]
	Params  []inspectParam `json:"params,omitempty"`
}

type inspectParam struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type inspectStatus struct {
	Status  int         `json:"status"`
	Headers []headerRow `json:"headers"`
}

// headerRow is one response header. On the served side Mark says what
// headgate did to it: "same", "added", "changed" or "removed".
type headerRow struct {
	Name     string `json:"name"`
	Value    string `json:"value"`
	Upstream string `json:"upstream,omitempty"`
	Mark     string `json:"mark,omitempty"`
}

// headRow is one line of the side-by-side heads: a tag of the upstream's
// head, of the served head, or both. Mark: "same", "changed", "removed"
// or "added".
type headRow struct {
	Mark     string `json:"mark"`
	Key      string `json:"key"`
	Upstream string `json:"upstream,omitempty"`
	Served   string `json:"served,omitempty"`
}

type headEnds struct {
	Upstream string `json:"upstream,omitempty"`
	Served   string `json:"served,omitempty"`
}

type inspectChange struct {
	Action   string `json:"action"`
	Identity string `json:"identity"`
	Key      string `json:"key,omitempty"`
	Value    string `json:"value,omitempty"`
	Reason   string `json:"reason"`
}

// searchPreview is a search result built from the served head. Title and
// Description are cut in the text (near 60 and 160 characters, at a word).
type searchPreview struct {
	SiteName       string   `json:"site_name"`
	Breadcrumb     []string `json:"breadcrumb"`
	URL            string   `json:"url"`
	Title          string   `json:"title"`
	TitleCut       bool     `json:"title_cut"`
	Description    string   `json:"description"`
	DescriptionCut bool     `json:"description_cut"`
}

// cardPreview is a link card built from the served head's og:* and
// twitter:* tags, in the shape twitter:card asks for.
type cardPreview struct {
	Shape       string `json:"shape"` // "summary_large_image" or "summary"
	Card        string `json:"twitter_card,omitempty"`
	Image       string `json:"image,omitempty"`
	ImageAlt    string `json:"image_alt,omitempty"`
	ImageOK     bool   `json:"image_loadable"`       // on base_url's origin or an image host: the card loads it (imagePolicy)
	ImageNote   string `json:"image_note,omitempty"` // why the card does not load it
	ImageHTTP   bool   `json:"-"`                    // an absolute http(s) URL: the page links to it
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	SiteName    string `json:"site_name,omitempty"`
	Domain      string `json:"domain"`
}

type inspectLink struct {
	URL  string `json:"url"`
	Path string `json:"path"`
}

type inspectIndexPage struct {
	BaseURL  string        `json:"base_url"`
	Upstream string        `json:"upstream"` // the upstream's own address (for builtin:demo, its loopback port)
	Links    []inspectLink `json:"sitemap_urls"`
	Note     string        `json:"note,omitempty"`
}

// Preview cuts (SPEC §14: near 60 and 160 characters; docs/operations.md).
const (
	searchTitleMax = 60
	searchDescMax  = 160
	maxHeadRows    = 500  // tags listed per side
	maxLine        = 1000 // characters of one listed tag
)

// buildReport renders what the proxy did with target: up is the Record
// it reported (its decision), rec what it served. It decides nothing: the
// kind, the rules, the outcome and why a page was not rewritten are the
// Record's.
func buildReport(cfg *rules.Config, target string, up *Record, rec *recorder) *inspectReport {
	rep := &inspectReport{Path: target, URL: strings.TrimRight(cfg.Site.BaseURL, "/") + target}
	m := up.Match
	if m == nil {
		m = &rules.Match{} // refused before resolving (a 400): no rules
	}
	reportDecision(&rep.Decision, cfg, m, up, rec)
	rep.UpstreamCoding = BrowserUpstreamCodingText(cfg, up)
	if cfg.Bots.Enabled && up.Kind != KindBadRequest && up.Kind != KindDeny {
		rep.Identity = reportIdentity(up)
	}
	status := rec.status

	// Status and headers.
	rep.Served.Status = status
	if up.UpstreamHeader != nil {
		rep.Upstream = &inspectStatus{Status: up.UpstreamStatus, Headers: headerRows(up.UpstreamHeader, nil)}
	}
	rep.Served.Headers = headerRows(rec.h, up.UpstreamHeader)
	switch {
	case status == 0:
		rep.Notes = append(rep.Notes, "No response came: the inspector stopped waiting.")
	case up.UpstreamHeader == nil && status >= 500:
		rep.Notes = append(rep.Notes, fmt.Sprintf("The upstream did not answer: headgate served its own %d page.", status))
	}
	if cfg.Site.Mode == rules.ModeShadow {
		rep.Notes = append(rep.Notes, "Shadow mode: headgate serves the upstream's head unchanged; the change list is what it would do.")
	}

	// What the rewriter did.
	switch {
	case up.Result != nil:
		rep.Outcome, rep.Reason = string(up.Result.Outcome), up.Result.Reason
		rep.Cached, rep.Plan = up.Result.Cached, string(up.Result.Plan)
	case up.UpstreamStatus != 0:
		rep.Outcome, rep.Reason = string(Passthrough), up.SkipReason()
	default:
		rep.Outcome = "not forwarded"
	}
	rep.Changes = []inspectChange{}
	if up.Result != nil {
		for _, c := range up.Result.Changes {
			rep.Changes = append(rep.Changes, inspectChange{
				Action: string(c.Action), Identity: c.Identity, Key: c.Key,
				Value: showText(clip(c.Value, maxLine)), Reason: changeReason(m, c),
			})
		}
	}
	servedTags := reportHeads(rep, up, rec)
	if servedTags != nil && status == http.StatusOK {
		rep.Search, rep.Card = previews(cfg, target, servedTags)
	}
	return rep
}

// reportDecision renders the Record's decision: its kind, the rules it
// matched, and for a forwarded request what the upstream answered when
// that was a redirect.
func reportDecision(d *inspectDecision, cfg *rules.Config, m *rules.Match, up *Record, rec *recorder) {
	d.Rules = []inspectRule{}
	for i, mr := range m.Matched {
		d.Rules = append(d.Rules, inspectRule{
			Pattern: m.Patterns()[i],
			Where:   fmt.Sprintf("%s:%d", cfg.File, mr.Rule.Line),
			Params:  params(mr.Params),
		})
	}
	d.Locale = m.Locale
	d.Experiment, d.Group = up.Experiment, up.Group
	if m.Any() {
		d.Policy = string(m.Policy())
	}
	status := rec.status
	loc := rec.h.Get("Location")
	switch kind := up.Kind; {
	case kind == KindBadRequest:
		d.Kind, d.Summary = string(kind), "headgate answers 400 itself (a dot segment, a NUL or bad percent-encoding); nothing is forwarded."
	case kind == KindDeny:
		d.Kind, d.Summary = string(kind), "A deny rule matches: headgate answers 404 itself; nothing is forwarded."
	case kind == KindBotDenied:
		d.Kind, d.Summary = string(kind), fmt.Sprintf("[bots] denies this crawler (%s): headgate answers 403 itself; nothing is forwarded.", up.BotRule)
	case status >= 300 && status < 400 && loc != "":
		// headgate's redirect, or the upstream's passed on.
		d.Kind, d.Location, d.By = string(KindRedirect), loc, "headgate"
		if up.UpstreamStatus != 0 {
			d.By = "upstream"
		}
		d.Summary = fmt.Sprintf("Redirect: %d to %s, answered by %s.", status, loc, d.By)
	case kind == KindRedirect: // a 410 of §11
		d.Kind, d.Summary = string(kind), fmt.Sprintf("headgate answers %d itself (a redirect rule or table, SPEC §11); nothing is forwarded.", status)
	case kind == KindHeadgate:
		d.Kind, d.Summary = string(kind), "headgate answers this path itself (sitemap or robots.txt)."
	case kind == KindRules:
		d.Kind, d.Summary = string(kind), fmt.Sprintf("%d rule(s) match, merged in this order (the later, more specific, wins).", len(m.Matched))
	default:
		d.Kind, d.Summary = string(KindNoRules), "No rule matches: headgate only corrects the upstream's own tags (site.correct_upstream)."
	}
	d.Status = status
}

// reportHeads lists both heads side by side and returns the served
// head's tags: the upstream's as the rewriter read them, or as passed
// through; the served one as it went out.
func reportHeads(rep *inspectReport, up *Record, rec *recorder) []itag {
	servedType := rec.h.Get("Content-Type")
	upType := servedType
	if up.UpstreamHeader != nil {
		upType = up.UpstreamHeader.Get("Content-Type")
	}
	var upTags, servedTags []itag
	var upCut, servedCut bool
	encoded := func(h http.Header) bool {
		ce := strings.TrimSpace(h.Get("Content-Encoding"))
		return ce != "" && !strings.EqualFold(ce, "identity")
	}
	switch {
	case up.Result != nil:
		rep.UpstreamHead = "the upstream's bytes as the rewriter read them (after any content coding)"
		upTags, rep.HeadEnd.Upstream, upCut = shownHead(upstreamHead(up, upType))
	case up.UpstreamStatus != 0 && htmlType(upType) && !encoded(rec.h):
		rep.UpstreamHead = "the upstream's bytes, passed through unchanged"
		upTags, rep.HeadEnd.Upstream, upCut = shownHead(rewrite.ListHead(rec.body, upType, rec.full))
	case up.UpstreamStatus != 0:
		rep.UpstreamHead = "not shown: the upstream's response is not an HTML page headgate reads (Content-Type " + quoteOrNone(upType) + ")"
	default:
		rep.UpstreamHead = "none: the upstream was not asked, or did not answer"
	}
	if htmlType(servedType) && !encoded(rec.h) {
		servedTags, rep.HeadEnd.Served, servedCut = shownHead(rewrite.ListHead(rec.body, servedType, rec.full))
	} else if encoded(rec.h) {
		rep.Notes = append(rep.Notes, "The served body is content-coded ("+rec.h.Get("Content-Encoding")+"): its head is not shown.")
	}
	if upCut || servedCut {
		rep.Notes = append(rep.Notes, fmt.Sprintf("A head is longer than the inspector lists (%d tags, or max_head_bytes): the list is cut.", maxHeadRows))
	}
	rep.Heads = alignHeads(upTags, servedTags)
	return servedTags
}

func params(ps []rules.Param) []inspectParam {
	out := make([]inspectParam, len(ps))
	for i, p := range ps {
		out[i] = inspectParam{p.Name, p.Value}
	}
	return out
}

// changeReason is a change's reason, or what makes a rule write or replace.
func changeReason(m *rules.Match, c rewrite.Change) string {
	if c.Reason != "" {
		return c.Reason
	}
	switch c.Action {
	case rewrite.Wrote:
		if by := m.SetBy(c.Identity, c.Key); by != "" {
			return by
		}
		return "a matching rule sets it"
	case rewrite.Replaced:
		if by := m.SetBy(c.Identity, c.Key); strings.HasPrefix(by, "rule ") {
			return strings.TrimSuffix(by, " sets it") + " sets this identity (policy override)"
		}
		return "a matching rule sets this identity (policy override)"
	case rewrite.Corrected:
		return "relative URL made absolute against site.base_url"
	}
	return ""
}

// headerRows lists h sorted by name; with up (the upstream's headers) each
// row is marked, and the upstream's headers headgate removed are listed.
func headerRows(h, up http.Header) []headerRow {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	if up != nil {
		for k := range up {
			if _, ok := h[k]; !ok {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	rows := make([]headerRow, 0, len(names))
	for _, k := range names {
		v, has := h[k]
		row := headerRow{Name: k, Value: strings.Join(v, ", ")}
		if up != nil {
			u, hadUp := up[k]
			row.Upstream = strings.Join(u, ", ")
			switch {
			case !has:
				row.Mark, row.Value = "removed", ""
			case !hadUp:
				row.Mark = "added"
			case row.Upstream != row.Value:
				row.Mark = "changed"
			default:
				row.Mark, row.Upstream = "same", ""
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// showText makes s one printable line: invalid UTF-8 as \xNN, line breaks
// and other control characters as \n, \r, \t or \u00NN.
func showText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02X`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip cuts s to n characters with "…".
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// cutWords cuts s to at most n characters, the "…" included, at the last
// space where that keeps most of it (else inside a word), the way search
// results shorten titles and snippets.
func cutWords(s string, n int) (string, bool) {
	s = collapse(s)
	r := []rune(s)
	if len(r) <= n {
		return s, false
	}
	keep := r[:n-1]
	if i := lastSpace(keep); i >= n*2/3 {
		keep = keep[:i]
	}
	return strings.TrimRight(string(keep), " ,;:-–—·|") + "…", true
}

func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}

// alignHeads pairs the tags of both heads in order: a longest common
// subsequence of their keys that prefers identical lines, so that tags
// headgate left alone line up; a tag removed in one place and written
// again elsewhere (a replaced canonical) becomes one "changed" line where
// it is served.
func alignHeads(up, served []itag) []headRow {
	n, m := len(up), len(served)
	rows := []headRow{}
	if n == 0 && m == 0 {
		return rows
	}
	score := func(i, j int) int32 {
		switch {
		case up[i].key != served[j].key:
			return 0
		case up[i].line == served[j].line:
			return 3
		}
		return 1
	}
	// best[i][j]: the best score of up[i:] against served[j:].
	best := make([][]int32, n+1)
	for i := range best {
		best[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			b := max(best[i+1][j], best[i][j+1])
			if s := score(i, j); s > 0 {
				b = max(b, best[i+1][j+1]+s)
			}
			best[i][j] = b
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && score(i, j) > 0 && best[i][j] == best[i+1][j+1]+score(i, j):
			mark := "same"
			if up[i].line != served[j].line {
				mark = "changed"
			}
			rows = append(rows, headRow{Mark: mark, Key: up[i].key, Upstream: up[i].line, Served: served[j].line})
			i++
			j++
		case j < m && (i == n || best[i][j+1] >= best[i+1][j]):
			rows = append(rows, headRow{Mark: "added", Key: served[j].key, Served: served[j].line})
			j++
		default:
			rows = append(rows, headRow{Mark: "removed", Key: up[i].key, Upstream: up[i].line})
			i++
		}
	}
	// A removed tag and an added one of the same identity: one change.
	out := rows[:0:0]
	removed := map[string]int{} // key → index in rows of an unpaired removal
	for k, r := range rows {
		if r.Mark == "removed" {
			removed[r.Key] = k
		}
	}
	drop := map[int]bool{}
	for k := range rows {
		r := &rows[k]
		if r.Mark != "added" {
			continue
		}
		if at, ok := removed[r.Key]; ok && !drop[at] {
			r.Upstream, r.Mark = rows[at].Upstream, "changed"
			if r.Upstream == r.Served {
				r.Mark = "same"
			}
			drop[at] = true
		}
	}
	for k, r := range rows {
		if !drop[k] {
			out = append(out, r)
		}
	}
	return out
}

// previews builds the search result and the link card from the served
// head's tags.
func previews(cfg *rules.Config, target string, tags []itag) (*searchPreview, *cardPreview) {
	var title, desc, canonical string
	hasTitle := false
	meta := map[string]string{} // first content of each name/property
	for _, t := range tags {
		switch t.name {
		case "title":
			if !hasTitle {
				title, hasTitle = t.text, true
			}
		case "meta":
			k := strings.ToLower(strings.TrimSpace(t.attrs["property"]))
			if k == "" {
				k = strings.ToLower(strings.TrimSpace(t.attrs["name"]))
			}
			if k != "" {
				if _, ok := meta[k]; !ok {
					meta[k] = t.attrs["content"]
				}
			}
		case "link":
			if strings.HasPrefix(t.key, "link canonical") && canonical == "" {
				canonical = t.attrs["href"]
			}
		}
	}
	desc = meta["description"]
	base, _ := url.Parse(cfg.Site.BaseURL)
	page := strings.TrimRight(cfg.Site.BaseURL, "/") + target
	if u, err := url.Parse(canonical); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		page = canonical
	}
	pu, _ := url.Parse(page)
	s := &searchPreview{URL: page}
	host := ""
	if pu != nil {
		host = pu.Host
	} else if base != nil {
		host = base.Host
	}
	s.SiteName = meta["og:site_name"]
	if s.SiteName == "" {
		s.SiteName = host
	}
	s.Breadcrumb = []string{host}
	if pu != nil {
		for _, seg := range strings.Split(strings.Trim(pu.EscapedPath(), "/"), "/") {
			if seg == "" {
				continue
			}
			if d, err := url.PathUnescape(seg); err == nil {
				seg = d
			}
			s.Breadcrumb = append(s.Breadcrumb, seg)
		}
	}
	s.Title, s.TitleCut = cutWords(title, searchTitleMax)
	s.Description, s.DescriptionCut = cutWords(desc, searchDescMax)

	c := &cardPreview{Card: strings.TrimSpace(meta["twitter:card"])}
	c.Shape = "summary"
	switch {
	case c.Card == "summary_large_image":
		c.Shape = "summary_large_image"
	case c.Card == "" && meta["og:image"] != "":
		c.Shape = "summary_large_image" // what Open Graph readers show
	}
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := strings.TrimSpace(meta[k]); v != "" {
				return v
			}
		}
		return ""
	}
	c.Title = first("og:title", "twitter:title")
	if c.Title == "" {
		c.Title = collapse(title)
	}
	c.Description = first("og:description", "twitter:description", "description")
	c.Image = first("og:image", "og:image:url", "og:image:secure_url", "twitter:image")
	c.ImageAlt = first("og:image:alt", "twitter:image:alt")
	// Loaded only where the page's imagePolicy allows: without one (a
	// report built apart from inspectPath), nowhere.
	(&imagePolicy{}).apply(c)
	c.SiteName = meta["og:site_name"]
	c.Domain = host
	if u, err := url.Parse(first("og:url", "twitter:url")); err == nil && u.Host != "" {
		c.Domain = u.Host
	}
	return s, c
}
