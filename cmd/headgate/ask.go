package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/headgate/headgate/app"
	"github.com/headgate/headgate/proxy"
	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

// explain and rewrite show what headgate does with one request. Neither
// decides anything itself: each sends the request through the proxy
// (app.Asker), in front of a stand-in upstream, and prints the proxy's
// answer and its Record.

// answer is the http.ResponseWriter of a one-shot request: a 200's body
// goes to body as the proxy streams it; any other status keeps its first
// KiB for the message.
type answer struct {
	header http.Header
	status int
	body   io.Writer // nil: every body is kept (up to a bound)
	kept   bytes.Buffer
	err    error
}

func newAnswer(body io.Writer) *answer { return &answer{header: http.Header{}, body: body} }

func (a *answer) Header() http.Header { return a.header }

func (a *answer) WriteHeader(code int) {
	if a.status == 0 && code >= 200 {
		a.status = code
	}
}

func (a *answer) Write(b []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	if a.err != nil {
		return 0, a.err
	}
	if a.status == http.StatusOK && a.body != nil {
		n, err := a.body.Write(b)
		a.err = err
		return n, err
	}
	if room := 64<<10 - a.kept.Len(); room > 0 {
		a.kept.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

func (a *answer) Flush() {}

// warnings collects the Warn lines the proxy logs for one request, so that
// explain can show them (a redirect loop, a dropped value).
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
		return true
	})
	w.mu.Lock()
	w.lines = append(w.lines, b.String())
	w.mu.Unlock()
	return nil
}
func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lines
	w.lines = nil
	return l
}

func cmdRewrite(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs, cfgPath := newFlags("rewrite", "rewrite -config FILE -path PATH [-content-type TYPE] [-changes] [-markdown] [FILE]", stderr)
	path := fs.String("path", "", "the request target as it arrives (percent-encoded, optionally with ?query)")
	ctype := fs.String("content-type", "text/html", "the response's Content-Type; the default names no charset, so the document's own <meta charset> decides, as a browser does")
	csp := fs.String("csp", "", "the response's Content-Security-Policy (for a script nonce)")
	changes := fs.Bool("changes", false, "list what was changed on stderr")
	asMarkdown := fs.Bool("markdown", false, "print the page's Markdown for agents (SPEC §19.1) instead of its HTML; [markdown]'s defaults when the config has none")
	if code, stop := parse(fs, args); stop {
		return code
	}
	if *path == "" || fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	var header http.Header
	if *asMarkdown {
		cfg = cfg.WithMarkdown()
		header = http.Header{"Accept": {"text/markdown"}}
	}
	in := stdin
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "headgate rewrite: %v\n", err)
			return exitFix
		}
		defer f.Close()
		in = f
	}
	// The stand-in upstream answers the one request with the document, as
	// an app would: 200, the given Content-Type and CSP, the bytes as they
	// are read.
	var asked atomic.Bool
	var readErr atomic.Pointer[error] // set by the stand-in's goroutine
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if asked.Swap(true) {
			http.NotFound(w, r)
			return
		}
		w.Header()["Content-Type"] = nil // no sniffing when -content-type ""
		if *ctype != "" {
			w.Header().Set("Content-Type", *ctype)
		}
		if *csp != "" {
			w.Header().Set("Content-Security-Policy", *csp)
		}
		if r.Method == http.MethodHead {
			return
		}
		if _, err := io.Copy(w, in); err != nil {
			readErr.Store(&err)
			panic(http.ErrAbortHandler)
		}
	})
	warn := &warnings{}
	a, err := app.NewAsker(cfg, slog.New(warn), upstream)
	if err != nil {
		fmt.Fprintf(stderr, "headgate rewrite: %v\n", err)
		return exitFix
	}
	defer a.Close()
	ans := newAnswer(stdout)
	rec, err := a.Ask(context.Background(), app.Request{Target: *path, Header: header, OnRecord: func(rec *proxy.Record) {
		if rec.Outcome.AnsweredItself() {
			ans.body = nil // not the document: its bytes are no answer to print
		}
	}}, ans)
	if ans.err != nil {
		fmt.Fprintf(stderr, "headgate rewrite: %v\n", ans.err)
		return exitFix
	}
	if err != nil {
		if e := readErr.Load(); e != nil {
			err = *e
		}
		fmt.Fprintf(stderr, "headgate rewrite: %v\n", err)
		return exitFix
	}
	if ans.status != http.StatusOK || rec.Outcome.AnsweredItself() {
		fmt.Fprintf(stderr, "headgate rewrite: %q: %s\n", *path, notForwarded(rec, ans))
		return exitFix
	}
	if *changes {
		writeChanges(stderr, rec)
	}
	if *asMarkdown && rec.Outcome != proxy.Markdown {
		why := "the page is no page headgate converts (a fragment, rewrite = false, or outside markdown.match)"
		if m := rec.Markdown; m != nil && m.Fallback != "" {
			why = m.Fallback + ": " + m.Err
		}
		fmt.Fprintf(stderr, "headgate rewrite: %q: no Markdown, the HTML was printed: %s\n", *path, why)
		return exitFix
	}
	return exitOK
}

// notForwarded says why headgate answered a one-shot request itself.
func notForwarded(rec *proxy.Record, ans *answer) string {
	switch rec.Outcome {
	case proxy.BadRequest:
		return "the proxy answers 400 for this path (a dot segment, a NUL or bad percent-encoding)"
	case proxy.Denied:
		return "the proxy answers 404 for this path (a deny rule); nothing is forwarded"
	case proxy.Redirected:
		if loc := ans.header.Get("Location"); loc != "" {
			return fmt.Sprintf("the proxy answers %d with Location %s; nothing is forwarded", ans.status, loc)
		}
		return fmt.Sprintf("the proxy answers %d; nothing is forwarded", ans.status)
	case proxy.Sitemap, proxy.Robots, proxy.LLMSTxt:
		return fmt.Sprintf("headgate serves this path itself (%s); nothing is forwarded", rec.Outcome)
	}
	return fmt.Sprintf("the proxy answers %d (%s)", ans.status, rec.Outcome)
}

func writeChanges(w io.Writer, rec *proxy.Record) {
	res := rec.Result
	if res == nil {
		fmt.Fprintf(w, "%s: the rewriter did not run\n", rec.Outcome)
		return
	}
	fmt.Fprintf(w, "%s: wrote=%d replaced=%d corrected=%d dropped=%d\n", res.Outcome,
		res.Count(rewrite.Wrote), res.Count(rewrite.Replaced), res.Count(rewrite.Corrected), res.Count(rewrite.Dropped))
	if res.Reason != "" {
		fmt.Fprintf(w, "  %s\n", res.Reason)
	}
	for _, c := range res.Changes {
		line := fmt.Sprintf("  %-9s %-22s %s", c.Action, c.Label(), c.Value)
		if c.Reason != "" {
			line += " (" + c.Reason + ")"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
}

// The stand-in upstream of explain: an HTML page with an empty head, and a
// PDF when asked for one, so that explain shows what headgate writes on
// each.
const (
	explainPage = "<!DOCTYPE html><html><head></head><body></body></html>"
	explainPDF  = "application/pdf"
)

// browserAccept is a browser's Accept on a navigation, which explain's
// request for the page sends: it decides what headgate asks the upstream
// for (server.upstream_page_coding).
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

func explainUpstream(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Accept") == explainPDF {
		w.Header().Set("Content-Type", explainPDF)
		io.WriteString(w, "%PDF-1.4\n%%EOF\n")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, explainPage)
}

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fs, cfgPath := newFlags("explain", "explain -config FILE [-ua USER-AGENT] [-ip ADDRESS] PATH", stderr)
	who := explainClientFlags(fs)
	if code, stop := parse(fs, args); stop {
		return code
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return exitUsage
	}
	cfg, code := load(*cfgPath, stderr)
	if cfg == nil {
		return code
	}
	target, req := explainTarget(cfg, fs.Arg(0))
	client, ok := who.addr(stderr)
	if !ok {
		return exitUsage
	}
	cfg, mode := explainAsProduction(cfg)
	warn := &warnings{}
	a, err := app.NewAsker(cfg, slog.New(warn), http.HandlerFunc(explainUpstream))
	if err != nil {
		fmt.Fprintf(stderr, "headgate explain: %v\n", err)
		return exitFix
	}
	defer a.Close()
	ask := func(h http.Header) (*proxy.Record, *answer) {
		ans := newAnswer(nil)
		rec, _ := a.Ask(context.Background(), app.Request{Target: target, Host: req.Host, HTTPS: req.HTTPS, Header: who.header(h), Client: client}, ans)
		return rec, ans
	}
	rec, ans := ask(http.Header{"Accept": {browserAccept}})
	if rec.Outcome == proxy.BadRequest {
		fmt.Fprintf(stdout, "%s: headgate answers 400 (a dot segment, a NUL or bad percent-encoding); nothing is forwarded\n", target)
		return exitOK
	}
	fmt.Fprintf(stdout, "%s\n", fs.Arg(0))
	for _, l := range warn.take() {
		fmt.Fprintf(stdout, "  headgate logs: %s\n", l)
	}
	if explainBot(stdout, cfg, rec, ans, *who.ua != "" || *who.ip != "") {
		return exitOK
	}
	switch rec.Outcome {
	case proxy.Redirected:
		explainRedirect(stdout, rec.Redirect, ans)
		return exitOK
	case proxy.Sitemap, proxy.Robots, proxy.LLMSTxt:
		fmt.Fprintf(stdout, "  headgate serves this itself (%s): %d %s; nothing is forwarded\n", rec.Outcome, ans.status, ans.header.Get("Content-Type"))
		return exitOK
	}
	m := rec.Match
	if m == nil {
		m = cfg.Resolve(target)
	}
	if !m.Any() {
		fmt.Fprintln(stdout, "  no rule matches: headgate only corrects the upstream's own tags")
	}
	for i, mr := range m.Matched {
		fmt.Fprintf(stdout, "  %d. %-30s %s:%d", i+1, m.Patterns()[i], *cfgPath, mr.Rule.Line)
		for _, p := range mr.Params {
			fmt.Fprintf(stdout, "  %s=%q", p.Name, p.Value)
		}
		fmt.Fprintln(stdout)
	}
	if m.Locale != "" {
		fmt.Fprintf(stdout, "  locale: %s\n", m.Locale)
	}
	explainReal(stdout, cfg, mode, rec, m)
	explainExperiment(stdout, cfg, rec)
	if rec.Outcome == proxy.Denied {
		fmt.Fprintln(stdout, "  deny: headgate answers 404; nothing is forwarded")
		return exitOK
	}
	fmt.Fprintf(stdout, "  policy: %s\n", m.Policy())
	if mode == rules.ModeShadow {
		fmt.Fprintln(stdout, "  shadow mode: headgate logs what follows and serves the upstream's bytes")
	}

	fmt.Fprintf(stdout, "\nOn an HTML page with an empty head, headgate writes (%s):\n", rec.Outcome)
	out := ans.kept.Bytes()
	start := bytes.Index(out, []byte("<head>")) + len("<head>")
	end := bytes.LastIndex(out, []byte("</head>"))
	if start > len("<head>")-1 && end >= start {
		for _, line := range strings.Split(strings.TrimSpace(string(out[start:end])), "\n") {
			if line != "" {
				fmt.Fprintf(stdout, "  %s\n", line)
			}
		}
	}
	_, pdf := ask(http.Header{"Accept": {explainPDF}})
	if added := addedHeaders(pdf.header, "Link", "X-Robots-Tag"); len(added) > 0 {
		fmt.Fprintln(stdout, "\nOn a non-HTML response (a PDF, an image):")
		for _, l := range added {
			fmt.Fprintf(stdout, "  %s\n", l)
		}
	}
	explainMarkdown(stdout, rec, ans, ask)
	var head *rules.Head
	if rec.Result != nil {
		head = rec.Result.Head
	}
	if head != nil {
		if len(head.Headers) > 0 {
			fmt.Fprintln(stdout, "\nResponse headers:")
			for _, h := range head.Headers {
				fmt.Fprintf(stdout, "  %s: %s\n", h.Name, h.Value)
			}
		}
		for _, d := range head.Dropped {
			fmt.Fprintf(stdout, "\ndropped %s of rule %q: %q (%s)\n", d.Field, d.Rule, d.Value, d.Reason)
		}
		explainRows(stdout, head, m.DataRows(head))
	}
	if mode == rules.ModeStaging {
		fmt.Fprintln(stdout, "\nstaging mode: every response also gets X-Robots-Tag: noindex, nofollow")
	}
	return exitOK
}

// addedHeaders lists the values of the named headers in h, as "Name: value"
// lines, in the order given.
func addedHeaders(h http.Header, names ...string) []string {
	var out []string
	for _, n := range names {
		for _, v := range h.Values(n) {
			out = append(out, n+": "+v)
		}
	}
	return out
}

// explainBot prints the Record's identity and what [bots]' access decided
// (SPEC §18), and reports whether headgate answered 403 for it.
func explainBot(w io.Writer, cfg *rules.Config, rec *proxy.Record, ans *answer, asked bool) bool {
	if !cfg.Bots.Enabled {
		if asked {
			fmt.Fprintln(w, "  identity: [bots] is off: requests are not identified")
		}
		return false
	}
	id := rec.Bot
	if !id.Known() {
		fmt.Fprintln(w, "  identity: no known crawler")
		return false
	}
	cat := string(id.Category)
	if cat == "" {
		cat = "no category"
	}
	fmt.Fprintf(w, "  identity: %s (%s), verified: %s\n", id.Name, cat, id.Verified)
	switch {
	case rec.Outcome == proxy.BotDenied:
		fmt.Fprintf(w, "  access: denied by %s: headgate answers %d; nothing is forwarded\n", rec.BotRule, ans.status)
		return true
	case rec.BotDenied:
		fmt.Fprintf(w, "  access: denied by %s (shadow mode: logged, forwarded)\n", rec.BotRule)
	case rec.BotRule != "":
		fmt.Fprintf(w, "  access: allowed by %s\n", rec.BotRule)
	case rec.Outcome.AnsweredItself():
		fmt.Fprintln(w, "  access: allowed (headgate answers this path itself, to every crawler)")
	default:
		fmt.Fprintln(w, "  access: allowed (no access rule matches)")
	}
	return false
}

// explainAsProduction is cfg in production mode: shadow serves the
// upstream's bytes, and explain shows what headgate would serve. mode is
// cfg's own.
func explainAsProduction(cfg *rules.Config) (*rules.Config, rules.Mode) {
	mode := cfg.Site.Mode
	if mode == rules.ModeShadow {
		c := *cfg
		c.Site.Mode = rules.ModeProduction
		cfg = &c
	}
	return cfg, mode
}

// explainClient is explain's -ua and -ip: who the request comes from, so
// that the proxy identifies it as it would that client (SPEC §18).
type explainClient struct{ ua, ip *string }

func explainClientFlags(fs *flag.FlagSet) explainClient {
	return explainClient{
		ua: fs.String("ua", "", "the request's User-Agent: shows how [bots] identifies it and what its access rules decide"),
		ip: fs.String("ip", "", "the client address the request comes from (with -ua: how [bots] verifies it)"),
	}
}

// addr is -ip; ok is false (and said on stderr) when it is not an address.
func (c explainClient) addr(stderr io.Writer) (a netip.Addr, ok bool) {
	if *c.ip == "" {
		return a, true
	}
	a, err := netip.ParseAddr(*c.ip)
	if err != nil {
		fmt.Fprintf(stderr, "headgate explain: -ip %q is not an IP address\n", *c.ip)
		return a, false
	}
	return a, true
}

// header is h with -ua's User-Agent.
func (c explainClient) header(h http.Header) http.Header {
	if *c.ua == "" {
		return h
	}
	if h == nil {
		h = http.Header{}
	}
	h.Set("User-Agent", *c.ua)
	return h
}
