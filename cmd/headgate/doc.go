// Command headgate runs the headgate reverse proxy and its tools.
//
//	headgate [serve] -config FILE                     run the proxy
//	headgate check -config FILE                       validate the config (exit 1 on any problem)
//	headgate explain -config FILE PATH                which rules match PATH and what they write
//	                 [-ua UA] [-ip ADDR]               as that client: its [bots] identity and access
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
// proxy: serve runs it, and sitemap, indexnow, the in-process audit,
// explain and rewrite ask the same pipeline (app builds it for
// them: the proxy, its sitemap handler, the demo site, and for explain and
// rewrite a stand-in upstream that answers with the document; each reads
// the response and its proxy.Record), so that what they write or report is
// what the proxy serves. Exit codes: 0 ok, 1 a problem to fix, 2 a
// usage error.
package main
