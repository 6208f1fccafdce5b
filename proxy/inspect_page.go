package proxy

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode/utf8"
)

// The inspector's pages: one self-contained HTML document each, no
// script, its style inline (allowed by hash in the CSP), images only
// where the link card shows the served og:image. html/template escapes
// every value for where it goes: the upstream's head is hostile input.

const inspectCSS = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa;--add:#dafbe1;--add-fg:#116329;--del:#ffebe9;--del-fg:#a40e26;--chg:#fff8c5;--chg-fg:#7d4e00;--link:#1a0dab}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:var(--fg);background:#fff}
header.top{display:flex;gap:16px;align-items:center;flex-wrap:wrap;padding:10px 24px;background:#24292f;color:#fff}
header.top .brand{font-weight:600;font-size:16px;color:#fff;text-decoration:none}
header.top form{display:flex;gap:6px;flex:1;min-width:280px}
header.top input[type=text]{flex:1;padding:5px 8px;border:1px solid #57606a;border-radius:6px;font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
header.top button{padding:5px 14px;border:0;border-radius:6px;background:#2da44e;color:#fff;font-weight:600}
header.top a.json{color:#c9d1d9;font-size:13px}
main{padding:16px 24px 40px;max-width:1500px}
h1{font-size:20px;margin:4px 0 4px;word-break:break-all}
h2{font-size:16px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
p.sub{margin:0 0 8px;color:var(--muted)}
code,.mono{font:12.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:3px 8px;border-bottom:1px solid var(--line)}
th{background:var(--bg);font-weight:600;font-size:12px;color:var(--muted)}
.decision{padding:10px 14px;border-radius:8px;background:var(--bg);border:1px solid var(--line)}
.decision.deny,.decision.bad_request{background:var(--del);border-color:#ffcecb}
.decision.redirect{background:var(--chg);border-color:#eed888}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;font-weight:600;background:#ddf4ff;color:#0969da}
.previews{display:flex;gap:24px;flex-wrap:wrap;align-items:flex-start}
.previews>section{flex:1;min-width:340px;max-width:640px}
.serp{padding:14px 16px;border:1px solid var(--line);border-radius:8px;font-family:Arial,sans-serif}
.serp .site{display:flex;gap:10px;align-items:center}
.serp .fav{width:26px;height:26px;border-radius:50%;background:#e8eaed;display:flex;align-items:center;justify-content:center;font-weight:700;color:#5f6368;font-size:13px}
.serp .sname{font-size:14px;color:#202124}
.serp .crumb{font-size:12px;color:#4d5156}
.serp .title{display:block;margin:6px 0 3px;font-size:20px;line-height:1.3;color:var(--link)}
.serp .desc{font-size:14px;color:#4d5156;line-height:1.58}
.serp .none{color:var(--del-fg);font-style:italic}
.card{border:1px solid #cfd9de;border-radius:16px;overflow:hidden;font-family:system-ui,sans-serif;max-width:520px;background:#fff}
.card .img{background:linear-gradient(135deg,#e6ecf0,#cfd9de);display:flex;align-items:center;justify-content:center;color:#536471;font-size:12px;overflow:hidden;position:relative}
.card .img img{display:block;width:100%;height:100%;object-fit:cover;position:absolute;inset:0}
.card .img span{padding:8px;word-break:break-all;text-align:center}
.card .img img::after{content:attr(data-label);position:absolute;inset:0;display:flex;align-items:center;justify-content:center;text-align:center;padding:8px;white-space:pre-wrap;word-break:break-all;background:linear-gradient(135deg,#e6ecf0,#cfd9de);color:#536471;font-size:12px}
.card.large .img{aspect-ratio:1.91/1;width:100%}
.card.large .body{padding:10px 14px 12px}
.card.small{display:flex}
.card.small .img{width:130px;min-height:130px;flex:none;border-right:1px solid #cfd9de}
.card.small .body{padding:12px 14px;min-width:0}
.card .dom{font-size:13px;color:#536471}
.card .ctitle{font-size:15px;color:#0f1419;margin:2px 0;font-weight:600;overflow:hidden;display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical}
.card .cdesc{font-size:14px;color:#536471;overflow:hidden;display:-webkit-box;-webkit-line-clamp:2;-webkit-box-orient:vertical}
.meta{color:var(--muted);font-size:12px;margin-top:6px}
.heads td.m{width:22px;text-align:center;font-weight:700}
.heads td.c{width:49%;white-space:pre-wrap;word-break:break-all}
.heads tr.removed td.up{background:var(--del)}
.heads tr.removed td.m{color:var(--del-fg);background:var(--del)}
.heads tr.added td.sv{background:var(--add)}
.heads tr.added td.m{color:var(--add-fg);background:var(--add)}
.heads tr.changed td.c{background:var(--chg)}
.heads tr.changed td.m{color:var(--chg-fg);background:var(--chg)}
.heads tr.same td.c{color:#424a53}
.heads tr.end td{color:var(--muted);font-style:italic}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:12px;height:12px;border-radius:3px;vertical-align:-1px;margin-right:4px}
.act{font-weight:600}
.act.wrote{color:var(--add-fg)}.act.replaced,.act.dropped{color:var(--del-fg)}.act.corrected{color:var(--chg-fg)}
.hdr td.v{word-break:break-all}
.hdr tr.added td{background:var(--add)}
.hdr tr.changed td{background:var(--chg)}
.hdr tr.removed td{background:var(--del);text-decoration:line-through}
ul.notes li{color:var(--chg-fg)}
ul.links{columns:2;padding-left:18px}
.l-del{background:var(--del)}.l-add{background:var(--add)}.l-chg{background:var(--chg)}.l-same{background:#fff;border:1px solid var(--line)}
table.rules{margin-top:8px}
.changes td.v{word-break:break-all}
.err{padding:14px;border-radius:8px;background:var(--del);color:var(--del-fg)}
`

var inspectStyleHash = func() string {
	sum := sha256.Sum256([]byte(inspectCSS))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// setPageHeaders sets the headers of every inspector page: no scripts at
// all, the inline style by hash, images (the card's) only from imgSrc, the
// origins imagePolicy allows ("": none).
func setPageHeaders(h http.Header, imgSrc string) {
	if imgSrc == "" {
		imgSrc = "'none'"
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src "+imgSrc+"; style-src "+inspectStyleHash+
		"; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
}

// inspectTemplates are parsed on the inspector's first page, not at start:
// a proxy that never shows them does not keep their trees (200 KB with the
// crawlers page's, a tenth of its live heap under load).
var inspectTemplates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("inspect").Funcs(template.FuncMap{
		"css":  func() template.CSS { return template.CSS(inspectCSS) },
		"json": func(path string) string { return "?path=" + url.QueryEscape(path) + "&format=json" },
		"inspect": func(path string) string {
			return "?path=" + url.QueryEscape(path)
		},
		"sym": func(mark string) string {
			return map[string]string{"removed": "−", "added": "+", "changed": "~"}[mark]
		},
		"initial": func(s string) string {
			for _, r := range strings.TrimPrefix(s, "www.") {
				return strings.ToUpper(string(r))
			}
			return "?"
		},
		"join":  strings.Join,
		"form":  func(path, example string) formData { return formData{path, example} },
		"inc":   func(i int) int { return i + 1 },
		"runes": func(s string) int { return utf8.RuneCountInString(s) },
	}).Parse(`
{{define "top"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>{{.}}</title>
<style>{{css}}</style>
</head><body>{{end}}

{{define "form"}}<header class="top"><a class="brand" href="?">headgate inspector</a>
<form method="get" action=""><input type="text" name="path" value="{{.Path}}" placeholder="{{.Example}}" aria-label="path" spellcheck="false"><button type="submit">Inspect</button></form>
{{if .Path}}<a class="json" href="{{json .Path}}">JSON</a>{{end}}</header>{{end}}

{{define "error"}}{{template "top" "headgate inspector"}}{{template "form" (form "" .Example)}}
<main><h1>{{.Status}} {{.Text}}</h1><p class="err">{{.Msg}}</p>
<p class="sub">path takes a request target on this site, such as <code>{{.Example}}</code>; a path typed with non-ASCII letters (<code>/wiki/Café</code>) is percent-encoded for you.</p></main></body></html>
{{end}}

{{define "index"}}{{template "top" "headgate inspector"}}{{template "form" (form "" .Example)}}
<main><h1>Inspect a page</h1>
<p class="sub">Type a path above, or pick one of the first URLs of headgate's sitemap for {{.BaseURL}}. The inspector asks the upstream as the proxy does and shows the head before and after headgate, the changes, and how a search result and a link card would look.</p>
<p class="sub">The upstream's own address: <a class="mono" href="{{.Upstream}}/">{{.Upstream}}</a> (the site as it answers without headgate).</p>
{{if .Note}}<p class="sub">{{.Note}}</p>{{end}}
{{with .Links}}<h2>From the sitemap</h2><ul class="links mono">{{range .}}<li><a href="{{inspect .Path}}">{{.Path}}</a></li>{{end}}</ul>{{end}}
</main></body></html>
{{end}}

{{define "report"}}{{template "top" (printf "%s · headgate inspector" .Path)}}{{template "form" (form .Path .Example)}}
<main>
<h1 class="mono">{{.URL}}</h1>
<p class="sub">Served <b>{{.Served.Status}}</b>{{with .Outcome}} · outcome <span class="badge">{{.}}</span>{{end}}{{if eq .Plan "near"}} (plan cached: the head differed only where nothing headgate decides reads){{else if .Cached}} (plan cached){{end}}{{with .Reason}} · {{.}}{{end}} · asked in {{.Elapsed}} · <a href="{{.UpstreamURL}}">the same page on the upstream</a></p>
{{if .Error}}<p class="err">{{.Error}}</p>{{end}}
{{with .Notes}}<ul class="notes">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .UpstreamCoding}}<p class="sub">Upstream asked for {{.}}</p>{{end}}

<h2 id="decision">Decision</h2>
<div class="decision {{.Decision.Kind}}"><b>{{.Decision.Summary}}</b>
{{if .Decision.Location}}<div class="mono">Location: {{.Decision.Location}}</div>{{end}}
{{with .Decision.Rules}}<table class="rules"><tr><th>#</th><th>rule</th><th>where</th><th>parameters</th></tr>
{{range $i, $r := .}}<tr><td>{{inc $i}}</td><td class="mono">{{$r.Pattern}}</td><td class="mono">{{$r.Where}}</td><td class="mono">{{range $r.Params}}{{.Name}}={{printf "%q" .Value}} {{end}}</td></tr>{{end}}
</table>{{end}}
{{with .Decision.Experiment}}<div class="meta" id="experiment">experiment <span class="mono">{{.}}</span>: group <span class="badge">{{$.Decision.Group}}</span></div>{{end}}
{{if or .Decision.Policy .Decision.Locale}}<div class="meta">{{with .Decision.Policy}}policy: {{.}}{{end}}{{with .Decision.Locale}} · locale: {{.}}{{end}}</div>{{end}}
</div>
{{with .Identity}}
<h2 id="identity">Identity</h2>
<table class="rules" id="identity-table"><tr><th>name</th><th>category</th><th>verified</th><th>access</th><th>rule</th></tr>
<tr><td class="mono">{{.Name}}</td><td>{{.Category}}</td><td>{{.Verified}}</td><td>{{.Access}}</td><td class="mono">{{.Rule}}</td></tr></table>
<p class="meta">{{.Summary}}</p>
{{end}}
{{with .UpstreamChanges}}
<h2 id="upstream-changes">Upstream changes</h2>
<table class="rules" id="upstream-changes-table"><tr><th>time (UTC)</th><th>severity</th><th>signal</th><th>before</th><th>after</th></tr>
{{range .}}<tr><td class="mono">{{.Time.UTC.Format "2006-01-02 15:04:05"}}</td><td><span class="badge">{{.Severity}}</span></td><td>{{.Signal}}</td><td class="mono">{{.Before}}</td><td class="mono">{{.After}}</td></tr>{{end}}</table>
<p class="meta">What the upstream itself said of this page changed, and held on [watch]'s confirm responses in a row; the latest first. All pages: the admin listener's <a href="/changes">/changes</a>.</p>
{{end}}

{{if or .Search .Card}}
<h2 id="previews">Previews, from the served head</h2>
<div class="previews">
{{with .Search}}<section><p class="sub">Search result</p><div class="serp" id="search-preview">
<div class="site"><div class="fav">{{initial .SiteName}}</div><div><div class="sname">{{.SiteName}}</div><div class="crumb">{{join .Breadcrumb " › "}}</div></div></div>
{{if .Title}}<span class="title" id="search-title">{{.Title}}</span>{{else}}<span class="title none" id="search-title">(no title)</span>{{end}}
{{if .Description}}<div class="desc" id="search-desc">{{.Description}}</div>{{else}}<div class="desc none" id="search-desc">(no description: a search engine picks a snippet from the page)</div>{{end}}
</div><div class="meta">Title {{if .TitleCut}}cut at a word to {{runes .Title}} characters (at most 60){{else}}shown whole: {{runes .Title}} characters, within 60{{end}}; description {{if .DescriptionCut}}cut at a word to {{runes .Description}} characters (at most 160){{else}}shown whole: {{runes .Description}} characters, within 160{{end}}. Links to <span class="mono">{{.URL}}</span></div></section>{{end}}
{{with .Card}}<section><p class="sub">Link card ({{if .Card}}twitter:card = {{.Card}}{{else}}no twitter:card: Open Graph shape{{end}})</p>
<div class="card {{if eq .Shape "summary_large_image"}}large{{else}}small{{end}}" id="link-card">
<div class="img">{{if .Image}}<span>{{if .ImageHTTP}}<a href="{{.Image}}" rel="noreferrer noopener" id="card-image-link">{{.Image}}</a>{{else}}{{.Image}}{{end}}{{with .ImageAlt}}<br>alt: {{.}}{{end}}{{with .ImageNote}}<br>({{.}}){{end}}</span>{{if .ImageOK}}<img src="{{.Image}}" alt="" referrerpolicy="no-referrer" data-label="{{.Image}}&#10;did not load from here{{with .ImageAlt}}&#10;alt: {{.}}{{end}}">{{end}}{{else}}<span>no og:image</span>{{end}}</div>
<div class="body"><div class="dom">{{.Domain}}</div><div class="ctitle" id="card-title">{{.Title}}</div>{{with .Description}}<div class="cdesc" id="card-desc">{{.}}</div>{{end}}{{with .SiteName}}<div class="meta">site: {{.}}</div>{{end}}</div>
</div></section>{{end}}
</div>
{{end}}

<h2 id="heads">The head, upstream and served</h2>
<p class="sub">Left: {{.UpstreamHead}}. Right: what headgate serves. One tag per line, paired by identity.</p>
<p class="legend"><span><i class="l-del"></i>− removed</span><span><i class="l-add"></i>+ added</span><span><i class="l-chg"></i>~ changed</span><span><i class="l-same"></i>unchanged</span></p>
<table class="heads mono" id="heads-table"><tr><th></th><th>upstream</th><th>served</th></tr>
{{range .Heads}}<tr class="{{.Mark}}" data-key="{{.Key}}"><td class="m">{{sym .Mark}}</td><td class="c up">{{.Upstream}}</td><td class="c sv">{{.Served}}</td></tr>
{{end}}<tr class="end"><td></td><td>head ends at {{or .HeadEnd.Upstream "—"}}</td><td>head ends at {{or .HeadEnd.Served "—"}}</td></tr>
</table>

{{with .Markdown}}<h2 id="markdown">Markdown for agents</h2>
<p class="sub">This page has a Markdown version (§19.1): <a href="{{.}}">the Markdown headgate serves for it</a>, made from the served head above and the page's content.</p>{{end}}

<h2 id="changes">Changes</h2>
{{if .Changes}}<table class="changes" id="changes-table"><tr><th>action</th><th>identity</th><th>key</th><th>value</th><th>reason</th></tr>
{{range .Changes}}<tr><td class="act {{.Action}}">{{.Action}}</td><td class="mono">{{.Identity}}</td><td class="mono">{{.Key}}</td><td class="mono v">{{.Value}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>{{else}}<p class="sub">headgate changed nothing in this head.</p>{{end}}

<h2 id="headers">Status and headers</h2>
<p class="sub">Served {{.Served.Status}}{{with .Upstream}}; the upstream answered {{.Status}}{{else}}; the upstream was not asked{{end}}. Marked: what headgate added, changed or removed.</p>
<table class="hdr mono" id="headers-table"><tr><th>header</th><th>served</th><th>upstream</th><th></th></tr>
{{range .Served.Headers}}<tr class="{{.Mark}}"><td>{{.Name}}</td><td class="v">{{.Value}}</td><td class="v">{{.Upstream}}</td><td>{{.Mark}}</td></tr>
{{end}}</table>
</main></body></html>
{{end}}
`))
})

// formData is what the form shows: the path asked (or "") and, as its
// placeholder, a path of this config.
type formData struct{ Path, Example string }

// reportPage is a report as the page shows it, with the form's example.
type reportPage struct {
	*inspectReport
	Example string
}

func writeInspectPage(w http.ResponseWriter, code int, rep *inspectReport, imgSrc, example string) {
	setPageHeaders(w.Header(), imgSrc)
	w.WriteHeader(code)
	inspectTemplates().ExecuteTemplate(w, "report", reportPage{shownPreviews(rep), example})
}

// shownPreviews returns rep with the previews' texts made printable for
// the page (showText: a control character as \u0001, not a raw byte a
// browser draws as a box); the JSON report keeps them as they are.
func shownPreviews(rep *inspectReport) *inspectReport {
	if rep.Search == nil && rep.Card == nil {
		return rep
	}
	r := *rep
	if s := rep.Search; s != nil {
		c := *s
		c.SiteName, c.URL, c.Title, c.Description = showText(c.SiteName), showText(c.URL), showText(c.Title), showText(c.Description)
		c.Breadcrumb = make([]string, len(s.Breadcrumb))
		for i, b := range s.Breadcrumb {
			c.Breadcrumb[i] = showText(b)
		}
		r.Search = &c
	}
	if s := rep.Card; s != nil {
		c := *s
		c.Title, c.Description, c.SiteName, c.Domain, c.ImageAlt = showText(c.Title), showText(c.Description), showText(c.SiteName), showText(c.Domain), showText(c.ImageAlt)
		r.Card = &c
	}
	return &r
}

func writeIndexPage(w http.ResponseWriter, idx *inspectIndexPage, example string) {
	setPageHeaders(w.Header(), "")
	inspectTemplates().ExecuteTemplate(w, "index", struct {
		*inspectIndexPage
		Example string
	}{idx, example})
}
