package watch

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"time"
)

// The admin /changes page: one self-contained document, no script, its
// style inline (allowed by hash in the CSP), in the inspector's look.
// html/template escapes every value: titles and canonicals are the
// upstream's, hostile input.

const pageCSS = `
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#f6f8fa;--del:#ffebe9;--del-fg:#a40e26;--chg:#fff8c5;--chg-fg:#7d4e00}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:var(--fg);background:#fff}
header.top{display:flex;gap:16px;align-items:center;flex-wrap:wrap;padding:10px 24px;background:#24292f;color:#fff}
header.top .brand{font-weight:600;font-size:16px;color:#fff;text-decoration:none}
header.top a{color:#c9d1d9;font-size:13px}
header.top a.on{color:#fff;font-weight:600}
main{padding:16px 24px 40px;max-width:1500px}
h1{font-size:20px;margin:4px 0 4px}
p.sub{margin:0 0 8px;color:var(--muted)}
code,.mono{font:12.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:3px 8px;border-bottom:1px solid var(--line)}
th{background:var(--bg);font-weight:600;font-size:12px;color:var(--muted)}
td.v{word-break:break-all}
.badge{display:inline-block;padding:0 8px;border-radius:10px;font-size:12px;font-weight:600;background:#ddf4ff;color:#0969da}
.badge.critical{background:var(--del);color:var(--del-fg)}
tr.critical td.t{border-left:3px solid var(--del-fg)}
.none{color:var(--muted);font-style:italic}
`

var styleHash = func() string {
	sum := sha256.Sum256([]byte(pageCSS))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

var pageTemplate = template.Must(template.New("changes").Funcs(template.FuncMap{
	"css":  func() template.CSS { return template.CSS(pageCSS) },
	"time": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>headgate · upstream changes</title>
<style>{{css}}</style>
</head><body>
<header class="top"><a class="brand" href="?">headgate · changes</a>
<a href="?"{{if eq .Severity ""}} class="on"{{end}}>all</a>
<a href="?severity=critical"{{if eq .Severity "critical"}} class="on"{{end}}>critical</a>
<a href="?severity=info"{{if eq .Severity "info"}} class="on"{{end}}>info</a>
<a href="?{{if .Severity}}severity={{.Severity}}&amp;{{end}}format=json">JSON</a></header>
<main>
<h1>Upstream changes</h1>
<p class="sub">The latest {{len .Events}} confirmed changes of what the upstream says of its pages, before headgate's rules (at most 1,000 kept, newest first{{if .Severity}}; {{.Severity}} only{{end}}). Each replica lists what it served.</p>
{{if .Events}}<table>
<thead><tr><th>Time (UTC)</th><th>Severity</th><th>URL</th><th>Signal</th><th>Before</th><th>After</th></tr></thead>
<tbody>{{range .Events}}
<tr class="{{.Severity}}"><td class="t mono">{{time .Time}}</td><td><span class="badge {{.Severity}}">{{.Severity}}</span></td><td class="v mono">{{.URL}}</td><td>{{.Signal}}</td><td class="v">{{if .Before}}{{.Before}}{{else}}<span class="none">none</span>{{end}}</td><td class="v">{{if .After}}{{.After}}{{else}}<span class="none">none</span>{{end}}</td></tr>{{end}}
</tbody></table>
{{else}}<p>No change seen{{if .Severity}} of this severity{{end}}.</p>{{end}}
</main></body></html>
`))

// Handler serves the /changes page of the admin listener: the latest
// events, ?severity=critical|info to filter, ?format=json for the same as
// a JSON array.
func (w *Watcher) Handler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		sev := r.URL.Query().Get("severity")
		if sev != "" && sev != Critical && sev != Info {
			http.Error(rw, "severity: want critical or info", http.StatusBadRequest)
			return
		}
		ev := w.Events(sev)
		h := rw.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		if r.URL.Query().Get("format") == "json" {
			h.Set("Content-Type", "application/json")
			if ev == nil {
				ev = []Event{}
			}
			enc := json.NewEncoder(rw)
			enc.SetIndent("", "  ")
			enc.Encode(ev)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src "+styleHash+"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		pageTemplate.Execute(rw, struct {
			Severity string
			Events   []Event
		}{sev, ev})
	})
}
