package test

// The inspector (SPEC §14) as a person sees it: headless Chromium loads
// /inspect for demo notes and for a hostile upstream; the DOM it dumps is
// checked, and screenshots are kept in the test's artifact directory
// (go test -artifacts -outputdir DIR keeps them; the path is logged).
// Debian's /usr/bin/chromium is what .ci/run installs; without it the test
// skips.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

func chromiumPath(t *testing.T) string {
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed (Debian: apt-get install chromium; .ci/run installs it): the browser checks of the inspector are skipped")
	return ""
}

// chromium runs headless Chromium once (runChromium): mode is
// "--dump-dom" or "--screenshot=FILE".
func chromiumInspect(t *testing.T, bin, mode, url string) []byte {
	t.Helper()
	return runChromium(t, "--hide-scrollbars", "--window-size=1400,2200", mode, url)
}

// startExample runs headgate on config.example.toml (on free ports), with
// extra TOML appended.
func startExample(t *testing.T, extra string) *headgate {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(filepath.Join(root, "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	listen, admin := freePort(t), freePort(t)
	cfg := strings.NewReplacer(`listen = ":8080"`, fmt.Sprintf("listen = %q", listen),
		`admin_listen = "127.0.0.1:9090"`, fmt.Sprintf("admin_listen = %q", admin)).Replace(string(example)) + extra
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := launch(t, path, listen, admin)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// servedHead reads the head headgate serves for path: the <title> text and
// the first content of each meta name/property.
func servedHead(t *testing.T, h *headgate, path string) (title string, meta map[string]string) {
	t.Helper()
	_, body := h.Get(t, "GET", path)
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	meta = map[string]string{}
	walkNodes(doc, func(n *html.Node) {
		switch n.Data {
		case "title":
			if n.FirstChild != nil && title == "" {
				title = n.FirstChild.Data
			}
		case "meta":
			k := attrVal(n, "property")
			if k == "" {
				k = attrVal(n, "name")
			}
			if _, ok := meta[k]; k != "" && !ok {
				meta[k] = attrVal(n, "content")
			}
		}
	})
	return title, meta
}

func walkNodes(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walkNodes(c, f)
	}
}

func attrVal(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func byID(doc *html.Node, id string) *html.Node {
	var found *html.Node
	walkNodes(doc, func(n *html.Node) {
		if found == nil && attrVal(n, "id") == id {
			found = n
		}
	})
	return found
}

func textOf(n *html.Node) string {
	if n == nil {
		return ""
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.TrimSpace(b.String())
}

// wantSearchTitle checks the search preview's title against the served
// title by the rule docs/operations.md states: whole when it has at most 60
// characters; else cut at a word boundary (or inside a word when the last
// space comes before character 40) to at most 60 characters, "…" included.
func wantSearchTitle(t *testing.T, got, served string) {
	t.Helper()
	served = strings.Join(strings.Fields(served), " ")
	if utf8.RuneCountInString(served) <= 60 {
		if got != served {
			t.Errorf("search title %q, want the served title %q whole", got, served)
		}
		return
	}
	kept, ok := strings.CutSuffix(got, "…")
	if !ok || utf8.RuneCountInString(got) > 60 || !strings.HasPrefix(served, kept) {
		t.Errorf("search title %q is not the served title %q cut to 60 characters with …", got, served)
		return
	}
	if next := served[len(kept):]; utf8.RuneCountInString(kept) >= 40 && !strings.ContainsAny(next[:1], " ,;:-|") {
		t.Errorf("search title %q is cut inside a word of %q", got, served)
	}
}

func TestInspectorInChromium(t *testing.T) {
	bin := chromiumPath(t)
	h := startExample(t, `
# A long title, to see the search result cut it.
[[rule]]
match = "/notes/5"
title = "Sharing a read-only link to one note with people who do not use Notes"
`)
	art := t.ArtifactDir()
	for _, c := range []struct{ path, shot string }{
		{"/notes/3", "inspect-notes-3.png"},
		{"/notes/5", "inspect-notes-5.png"},
	} {
		t.Run(strings.ReplaceAll(strings.Trim(c.path, "/"), "/", "-"), func(t *testing.T) {
			served, meta := servedHead(t, h, c.path)
			url := h.Admin + "/inspect?path=" + c.path
			dom := chromiumInspect(t, bin, "--dump-dom", url)
			doc, err := html.Parse(bytes.NewReader(dom))
			if err != nil {
				t.Fatal(err)
			}
			// Both heads, with changes marked.
			table := byID(doc, "heads-table")
			if table == nil {
				t.Fatalf("no heads table in the DOM:\n%s", tail(string(dom), 3000))
			}
			marks := map[string]int{}
			var canonical *html.Node
			walkNodes(table, func(n *html.Node) {
				if n.Data == "tr" {
					marks[attrVal(n, "class")]++
					if attrVal(n, "data-key") == "link canonical" {
						canonical = n
					}
				}
			})
			if marks["added"] == 0 || marks["changed"] == 0 || marks["same"] == 0 {
				t.Errorf("head rows by mark %v: want added, changed and unchanged lines", marks)
			}
			if canonical == nil || attrVal(canonical, "class") != "changed" ||
				!strings.Contains(textOf(canonical), `href="`+c.path+`"`) ||
				!strings.Contains(textOf(canonical), `href="https://notes.example`+c.path+`"`) {
				t.Errorf("canonical row: %q", textOf(canonical))
			}
			if byID(doc, "changes-table") == nil {
				t.Error("no change list")
			}
			// The previews, from the served head.
			if byID(doc, "search-preview") == nil || byID(doc, "link-card") == nil {
				t.Fatal("a preview is missing")
			}
			if got := textOf(byID(doc, "card-title")); got != meta["og:title"] || got == "" {
				t.Errorf("card title %q, served og:title %q", got, meta["og:title"])
			}
			wantSearchTitle(t, textOf(byID(doc, "search-title")), served)
			if got := textOf(byID(doc, "search-desc")); got != meta["description"] {
				t.Errorf("search description %q, served description %q", got, meta["description"])
			}
			shot := filepath.Join(art, c.shot)
			chromiumInspect(t, bin, "--screenshot="+shot, url)
			if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
				t.Fatalf("no screenshot: %v", err)
			}
			t.Logf("screenshot: %s", shot)
		})
	}
}

// A hostile upstream head shows as text, and nothing in it runs.
func TestInspectorHostileHeadInChromium(t *testing.T) {
	bin := chromiumPath(t)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"+
			"<title></textarea><script>document.title='pwned'</script></title>"+
			"<meta name=\"description\" content=\"&quot;><img src=x onerror=&quot;document.title='pwned-img'&quot;>\">"+
			"<meta property=\"og:title\" content=\"</textarea><script>document.body.append('pwned-og')</script>\">"+
			"<meta property=\"og:image\" content=\"javascript:document.title='pwned-js'\">"+
			"<link rel=\"canonical\" href=\"javascript:document.title='pwned-canonical'\">"+
			"<meta name=\"twitter:description\" content=\"bad bytes \xff\xfe\xc3( here\">"+
			"<script>document.title='pwned-script'</script>"+
			"</head><body>hello</body></html>")
	})
	h := start(t, config{Upstream: up.URL, Rules: `
[[rule]]
match = "/*"
[rule.twitter]
card = "summary"
`})
	url := h.Admin + "/inspect?path=/hostile"
	dom := chromiumInspect(t, bin, "--dump-dom", url)
	doc, err := html.Parse(bytes.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	var title string
	scripts, imgs := 0, 0
	walkNodes(doc, func(n *html.Node) {
		switch n.Data {
		case "title":
			title = textOf(n)
		case "script":
			scripts++
		case "img":
			imgs++
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("an element has %s=%q", a.Key, a.Val)
			}
		}
	})
	if title != "/hostile · headgate inspector" {
		t.Errorf("document.title is %q: a script ran", title)
	}
	if scripts != 0 || imgs != 0 {
		t.Errorf("the DOM has %d script and %d img elements", scripts, imgs)
	}
	walkNodes(doc, func(n *html.Node) {
		if n.Data != "body" {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode && strings.Contains(c.Data, "pwned") {
				t.Errorf("a script appended %q to the body", c.Data)
			}
		}
	})
	for _, want := range []string{"&lt;/textarea&gt;&lt;script&gt;", `\xFF\xFE\xC3(`, "javascript:document.title="} {
		if !bytes.Contains(dom, []byte(want)) {
			t.Errorf("the page does not show %q as text", want)
		}
	}
	shot := filepath.Join(t.ArtifactDir(), "inspect-hostile.png")
	chromiumInspect(t, bin, "--screenshot="+shot, url)
	t.Logf("screenshot: %s", shot)
}

// The start-up line names the inspector's address and the upstream's own,
// and both answer: the inspector, and the demo app with its own head.
func TestStartLineNamesInspectorAndUpstream(t *testing.T) {
	h := startExample(t, "")
	h.WaitLog(t, `"msg":"headgate serving"`)
	line := ""
	for _, l := range strings.Split(h.Logs.String(), "\n") {
		if strings.Contains(l, `"msg":"headgate serving"`) {
			line = l
		}
	}
	var start struct {
		Inspect      string `json:"inspect"`
		UpstreamAddr string `json:"upstream_addr"`
	}
	if err := json.Unmarshal([]byte(line), &start); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if start.Inspect != h.Admin+"/inspect" || !strings.HasPrefix(start.UpstreamAddr, "http://127.0.0.1:") {
		t.Fatalf("start-up line %s", line)
	}
	res, err := client.Get(start.Inspect + "?path=/notes/3")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("%s: %d", start.Inspect, res.StatusCode)
	}
	res, err = client.Get(start.UpstreamAddr + "/notes/3")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Contains(body, []byte(`<link rel="canonical" href="/notes/3">`)) {
		t.Errorf("%s/notes/3 is not the demo app's own page:\n%s", start.UpstreamAddr, body)
	}
}
