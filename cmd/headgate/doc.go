// Command headgate runs the headgate reverse proxy and its tools.
//
//	headgate [serve] -config FILE                     run the proxy
//	headgate check -config FILE                       validate the config (exit 1 on any problem)
//	headgate explain -config FILE PATH                which rules match PATH and what they write
//	headgate rewrite -config FILE -path PATH [FILE]   rewrite one document from FILE or stdin
//	headgate sitemap -config FILE [-o DIR]            write the sitemap
//	headgate audit -config FILE [flags] [URL...]      crawl and report head problems
//	headgate indexnow -config FILE -state FILE        submit changed sitemap URLs to IndexNow
//	headgate version
//
// main.go's usage text lists every command's flags.
//
// The package parses flags, wires the other packages together (STYLE
// habit 11) and prints; run holds the whole program so that tests call it
// in process. What headgate does with a request is decided in package
// proxy: serve runs it, and sitemap, indexnow and the in-process audit ask
// the same pipeline (internal/wire builds it for them: the proxy, its
// sitemap handler, the demo site; the audit reads each response's
// proxy.Record), so that what they write or report is what the proxy
// serves. explain and rewrite do not ask it yet: they read the rules and
// the rewriter directly (check.go, explain_real.go); explain checks the
// 400, deny and redirects itself and does not know headgate's own files
// (/sitemap.xml, /robots.txt). Exit codes: 0 ok, 1 a problem to fix, 2 a
// usage error.
package main
