// Command headgate runs the headgate reverse proxy and its tools.
//
//	headgate [serve] -config FILE              run the proxy
//	headgate check -config FILE                validate the config (exit 1 on any problem)
//	headgate explain -config FILE PATH         which rules match PATH and what they write
//	headgate rewrite -config FILE -path P      rewrite one document from a file or stdin
//	headgate sitemap -config FILE [-o DIR]     generate the sitemap
//	headgate audit -config FILE [URL...]       crawl and report head problems
//	headgate indexnow -config FILE -state FILE submit changed URLs to IndexNow
//	headgate version
//
// The package only parses flags and wires the other packages together
// (STYLE habit 11); run holds the whole program so that tests call it in
// process. What headgate does with a request is decided in one place,
// package proxy: serve runs it, and sitemap, indexnow and the in-process
// audit ask the same pipeline (internal/wire builds it for them: the
// proxy, its sitemap handler, the demo site), so that what they write or
// report is what the proxy serves. Exit codes: 0 ok, 1 a problem to fix,
// 2 a usage error.
package main
