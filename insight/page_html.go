package insight

// pageCSS is the part of the inspector's style (proxy/inspect_page.go)
// this page uses, and its charts'. Copied rather than shared: insight sits
// below proxy, and the two pages may drift apart in what they need.
const pageCSS = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa;--add:#dafbe1;--add-fg:#116329;--del:#ffebe9;--del-fg:#a40e26;--chg:#fff8c5;--chg-fg:#7d4e00;--bar:#0969da}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:var(--fg);background:#fff}
header.top{display:flex;gap:16px;align-items:center;flex-wrap:wrap;padding:10px 24px;background:#24292f;color:#fff}
header.top .brand{font-weight:600;font-size:16px;color:#fff;text-decoration:none}
header.top .win{color:#c9d1d9;font-size:13px;flex:1}
header.top a.json{color:#c9d1d9;font-size:13px}
main{padding:16px 24px 40px;max-width:1500px}
h1{font-size:20px;margin:4px 0 4px;word-break:break-all}
h2{font-size:16px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:13px;margin:12px 0 4px;color:var(--muted)}
p.sub{margin:0 0 8px;color:var(--muted)}
code,.mono{font:12.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:3px 8px;border-bottom:1px solid var(--line)}
th{background:var(--bg);font-weight:600;font-size:12px;color:var(--muted)}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;font-weight:600;background:#ddf4ff;color:#0969da;vertical-align:2px}
.meta{color:var(--muted);font-size:12px;margin-top:6px}
.err{color:var(--del-fg);font-weight:600}
.ok{color:var(--add-fg)}
.crawler{margin-top:8px}
.cols{display:flex;gap:24px;flex-wrap:wrap;align-items:flex-start}
.cols>div{flex:1;min-width:300px}
.cols>div.chart{flex:none}
table.paths td.p{word-break:break-all}
svg.hours{display:block;max-width:100%;height:auto}
svg .bar{fill:var(--bar)}
svg .spoof{fill:#cf222e}
svg .axis{stroke:#8c959f;stroke-width:1}
svg .grid{stroke:var(--line);stroke-width:1;stroke-dasharray:3 3}
svg text{font:11px system-ui,sans-serif;fill:var(--muted)}
svg text.ttl{font-size:11px;fill:var(--fg)}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:12px;height:12px;border-radius:3px;vertical-align:-1px;margin-right:4px}
.l-bar{background:var(--bar)}.l-spoof{background:#cf222e}
`

const pageHTML = `{{define "chart"}}<svg class="hours" id="{{.ID}}" role="img" aria-label="{{.AxisTitle}}" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" xmlns="http://www.w3.org/2000/svg">
<line class="grid" x1="44" x2="{{.W}}" y1="{{f .MaxY}}" y2="{{f .MaxY}}"/>
<text x="38" y="{{f .MaxY}}" dy="4" text-anchor="end" class="ymax">{{.Max}}</text>
<text x="38" y="{{f .BaseY}}" text-anchor="end">0</text>
{{range .Bars}}<g class="h"><title>{{.Title}}</title><rect class="bar" x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}"/>{{if .SpoofH}}<rect class="spoof" x="{{f .X}}" y="{{f .SpoofY}}" width="{{f .W}}" height="{{f .SpoofH}}"/>{{end}}</g>
{{end}}<line class="axis" x1="44" x2="{{.W}}" y1="{{f .BaseY}}" y2="{{f .BaseY}}"/>
{{range .Ticks}}<text x="{{f .X}}" y="{{f $.LabelY}}" text-anchor="middle">{{.Label}}</text>{{end}}
<text class="ttl" x="{{.W}}" y="{{.H}}" dy="-3" text-anchor="end">{{.AxisTitle}}</text>
</svg>{{end}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Crawlers · headgate</title>
<style>{{css}}</style>
</head><body>
<header class="top"><a class="brand" href="?">headgate crawlers</a><span class="win">the last 24 hours: {{.Window}}</span><a class="json" href="?format=json">JSON</a></header>
<main>
<h1>What crawlers do</h1>
<p class="sub">{{.Total}} requests from identified crawlers in this replica's memory{{if not .Crawlers}}: none yet{{end}}. Verified: by published IP ranges, reverse DNS or a Web Bot Auth signature; spoofed: claims a verifiable crawler and failed; unverifiable: its operator publishes no way to check. Counts start again when headgate restarts; Prometheus keeps the history.</p>
{{with .Crawlers}}<table class="summary" id="summary"><tr><th>crawler</th><th>category</th><th class="n">requests</th><th class="n">verified</th><th class="n">spoofed</th><th class="n">unverifiable</th><th class="n">2xx</th><th class="n">3xx</th><th class="n">4xx</th><th class="n">5xx</th><th class="n">robots violations</th><th class="n">sent</th></tr>
{{range .}}<tr data-crawler="{{.Name}}"><td><a href="#{{.Anchor}}">{{.Name}}</a></td><td>{{or .Category "—"}}</td><td class="n req">{{.Requests}}</td><td class="n ok">{{.Yes}}</td><td class="n{{if .No}} err{{end}}">{{.No}}</td><td class="n">{{.Unverif}}</td><td class="n">{{index .Status "2xx"}}</td><td class="n">{{index .Status "3xx"}}</td><td class="n">{{index .Status "4xx"}}</td><td class="n">{{index .Status "5xx"}}</td><td class="n{{if .RobotsViolations}} err{{end}}">{{.RobotsViolations}}</td><td class="n">{{.Size}}</td></tr>
{{end}}</table>{{end}}

{{range $c := .Crawlers}}<section class="crawler" id="{{.Anchor}}" data-crawler="{{.Name}}">
<h2>{{.Name}} {{with .Category}}<span class="badge">{{.}}</span>{{end}}{{with .Operator}} <span class="meta">{{.}}</span>{{end}}</h2>
<p class="sub"><b class="req">{{.Requests}}</b> requests · verified <b class="ok">{{.Yes}}</b>{{if or (index .Verified "ip") (index .Verified "dns") (index .Verified "signature")}} (ip {{index .Verified "ip"}}, dns {{index .Verified "dns"}}, signature {{index .Verified "signature"}}){{end}} · spoofed <b class="{{if .No}}err{{end}} spoofed">{{.No}}</b> · unverifiable <b class="unverifiable">{{.Unverif}}</b> · robots violations <b class="{{if .RobotsViolations}}err{{end}} violations">{{.RobotsViolations}}</b> · {{.Size}} sent</p>
<div class="cols"><div class="chart">{{template "chart" .Chart}}
<p class="legend"><span><i class="l-bar"></i>requests</span><span><i class="l-spoof"></i>of them spoofed</span></p></div>
<div><h3>Status</h3><table class="status"><tr>{{range $k, $v := .Status}}<th class="n">{{$k}}</th>{{end}}</tr><tr>{{range $k, $v := .Status}}<td class="n" data-class="{{$k}}">{{$v}}</td>{{end}}</tr></table>
<h3>Top paths (since {{$.PathsFrom}})</h3>
{{with .Paths}}<table class="paths"><tr><th>path</th><th class="n">requests</th></tr>
{{range .}}<tr><td class="p mono">{{.Path}}</td><td class="n" title="{{if .Error}}may include up to {{.Error}} requests for other paths{{else}}exact{{end}}">{{if .Error}}≤ {{end}}{{.Count}}</td></tr>
{{end}}</table>{{if gt (len $c.TopPaths) (len $c.Paths)}}<p class="meta">{{len $c.TopPaths}} tracked; the JSON lists them all.</p>{{end}}{{else}}<p class="sub">none</p>{{end}}</div></div>
</section>
{{end}}

<h2 id="referrals">Referrals</h2>
<p class="sub">Requests whose Referer is a search engine or an AI assistant (docs/operations.md lists the hosts), from anyone. Compare with the crawlers above for crawl-to-refer.</p>
{{with .Sources}}<table class="referrals" id="referrals-table"><tr><th>source</th><th class="n">visits</th><th>by hour</th></tr>
{{range .}}<tr data-source="{{.Source}}"><td>{{.Source}}</td><td class="n total">{{.Total}}</td><td>{{template "chart" .Chart}}</td></tr>
{{end}}</table>{{else}}<p class="sub">No referral in the window.</p>{{end}}
{{with .Quiet}}<p class="meta">No visits from: {{range $i, $s := .}}{{if $i}}, {{end}}{{$s}}{{end}}.</p>{{end}}
</main></body></html>
`
