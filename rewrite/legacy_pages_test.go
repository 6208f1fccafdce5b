package rewrite

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// legacyPages generates the pages the properties run on in every clone,
// whether or not ../shared's corpora are beside it: legacy heads of every
// shape the corpora show, combined pseudo-randomly with a fixed seed (the
// same pages on every run). Each part below is one such shape; the
// combinations give implicit and late head ends, comments, scripts,
// noscript, template, style, charsets declared early, late or by
// http-equiv, duplicates, relative and hostile URLs, and bodies that hold
// head-like markup.
func legacyPages() []corpusPage {
	rng := rand.New(rand.NewPCG(20261201, 11))
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	doctypes := []string{"", "<!DOCTYPE html>\n", "<!doctype html>", "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Transitional//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd\">\n", "<!-- generated -->\n<!DOCTYPE html>\n"}
	htmls := []string{"", "<html>", "<html lang=\"en\">\n", "<HTML LANG=de>", "<html xmlns=\"http://www.w3.org/1999/xhtml\">\n"}
	heads := []string{"", "<head>", "<head>\n", "<HEAD profile=\"http://gmpg.org/xfn/11\">", "  <head >\n"}
	charsets := []string{"", "<meta charset=\"utf-8\">\n", "<meta charset=UTF-8>", "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">\n", "<META HTTP-EQUIV=\"content-type\" CONTENT=\"text/html; charset=windows-1252\">\n"}
	parts := []string{
		"<title>Legacy page</title>\n",
		"<TITLE>  Spaced\n title </TITLE>",
		"<title>Caf\u00e9 &amp; more</title>\n",
		"<meta name=\"description\" content=\"An old description\">\n",
		"<meta name=Description content='Second description'>",
		"<link rel=\"canonical\" href=\"/pages/hello-world?ref=old\">\n",
		"<link rel=canonical href=\"javascript:alert(1)\">\n",
		"<link rel=\"canonical stylesheet\" href=\"/c.css\">\n",
		"<meta property=\"og:title\" content=\"Upstream OG\">\n",
		"<meta property=\"og:image\" content=\"/img/old.png\"><meta property=\"og:image:width\" content=\"10\">\n",
		"<meta name=\"twitter:card\" content=\"summary\">\n",
		"<meta name=\"robots\" content=\"noindex\">\n",
		"<!-- <title>not a title</title> </head> -->\n",
		"<!--[if lt IE 9]><script src=\"html5shiv.js\"></script><![endif]-->\n",
		"<script>var s = \"</head><body>\"; if (a < b) {}</script>\n",
		"<script><!-- document.write('<title>x</title>') --></script>\n",
		"<script type=\"application/ld+json\">{\"@type\":\"WebSite\",\"name\":\"Old\"}</script>\n",
		"<noscript><link rel=\"stylesheet\" href=\"/noscript.css\"></noscript>\n",
		"<style>head > title { color: red } /* </head> */</style>\n",
		"<template><meta name=\"description\" content=\"in a template\"></template>\n",
		"<base href=\"/\">\n",
		"<link rel=\"alternate\" hreflang=\"de\" href=\"/de/pages/hello-world\">\n",
		"<link rel=\"stylesheet\" href=\"/site.css\">\n",
		"<meta name=\"viewport\" content=\"width=device-width\">\n",
		"<script src=\"/app.js\" defer></script>\n",
		"<style>" + strings.Repeat(".c{color:#333}", 110) + "</style>\n", // an inlined stylesheet: heads over 1 KiB
	}
	ends := []string{
		"</head>\n<body>",
		"</head><body class=\"home\">",
		"<body>",                     // implicit end at <body>
		"\n<div id=\"app\">",         // implicit end at a body element
		"Stray text ends the head\n", // implicit end at text
		"<div>late</div><meta name=\"x\" content=\"in the stretch\"></head><body>", // late </head>
		"<p>text</p>\n</head>\n<body>",                                             // late </head> after text
		"",                                                                         // no end at all: EOF
	}
	bodies := []string{
		"<h1>Hello</h1><p>Body text \u00e9\u00e8 \u2014 \u65e5\u672c</p></body></html>\n",
		"<p>A body with <head> and </head> inside</p><title>body title</title></body></html>",
		"<script>document.title = \"x\";</script><p>t</p>",
		"",
		"<svg><title>an svg title</title></svg><p>after</p></body>",
	}
	var pages []corpusPage
	for i := range 240 {
		var b strings.Builder
		b.WriteString(pick(doctypes))
		b.WriteString(pick(htmls))
		b.WriteString(pick(heads))
		cs := pick(charsets)
		late := rng.IntN(4) == 0
		if !late {
			b.WriteString(cs)
		}
		n := rng.IntN(9)
		for range n {
			b.WriteString(pick(parts))
		}
		if late {
			b.WriteString(cs) // a charset after the title: §4.4 keeps it first
		}
		end := pick(ends)
		b.WriteString(end)
		if end != "" {
			b.WriteString(pick(bodies))
		}
		doc := b.String()
		if strings.Contains(cs, "windows-1252") {
			doc = toWindows1252(doc)
		}
		pages = append(pages, corpusPage{fmt.Sprintf("generated/%03d.html", i), []byte(doc)})
	}
	return pages
}

// toWindows1252 spells the characters the parts use in windows-1252, as a
// page that declares it would.
func toWindows1252(s string) string {
	return strings.NewReplacer("\u00e9", "\xe9", "\u00e8", "\xe8", "\u2014", "\x97", "\u65e5\u672c", "?").Replace(s)
}
