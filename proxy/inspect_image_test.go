package proxy

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
)

// TestInspectCardImageOrigin: the link card loads an og:image only from
// base_url's origin or a host in inspector.image_hosts (SPEC §23); any other — the
// admin listener's own profile, an intranet address, a look-alike host —
// is shown as its URL and a link, and the CSP's img-src names exactly the
// allowed origins.
func TestInspectCardImageOrigin(t *testing.T) {
	images := map[string]string{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!DOCTYPE html><html><head><title>Card</title>`+
			`<meta property="og:image" content="`+html.EscapeString(images[r.URL.Path])+`"></head><body>x</body></html>`)
	}))
	t.Cleanup(up.Close)
	p, err := New(testConfig(t, up.URL, "[[rule]]\nmatch = \"/*\"\n\n[inspector]\nimage_hosts = [\"CDN.example\", \"img.example:8443\"]\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	adm := httptest.NewServer(p.Admin())
	t.Cleanup(adm.Close)

	for i, tc := range []struct {
		image string
		load  bool
	}{
		{"http://127.0.0.1:9090/debug/pprof/profile?seconds=30", false},
		{"http://localhost:9090/metrics", false},
		{"http://[::1]:9090/inspect?path=/x", false},
		{"http://10.0.0.5/intranet/admin.png", false},
		{"http://169.254.169.254/latest/meta-data/", false},
		{"https://router.lan/cgi-bin/reboot", false},
		{"https://notes.example.evil.example/x.png", false},
		{"https://notes.example:8443/x.png", false}, // another port: another origin
		{"http://notes.example/x.png", false},       // another scheme: another origin
		{"https://user@notes.example/x.png", false},
		{"https://cdn.example:9090/x.png", false}, // a listed name, an unlisted port
		{"https://img.example/x.png", false},
		{"https://notes.example/covers/a.png", true},
		{"https://NOTES.example:443/covers/a.png", true},
		{"https://cdn.example/a.png", true},
		{"http://cdn.example/a.png", true},
		{"https://img.example:8443/a.png", true},
	} {
		path := "/p" + string(rune('a'+i))
		images[path] = tc.image
		res, err := http.Get(adm.URL + "/inspect?path=" + url.QueryEscape(path))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d", tc.image, res.StatusCode)
		}
		const csp = "img-src https://notes.example http://cdn.example https://cdn.example http://img.example:8443 https://img.example:8443;"
		if got := res.Header.Get("Content-Security-Policy"); !strings.Contains(got, csp) {
			t.Errorf("CSP %q, want %q", got, csp)
		}
		var srcs, links []string
		doc, err := xhtml.Parse(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for n := range doc.Descendants() {
			for _, a := range n.Attr {
				switch {
				case n.Data == "img" && a.Key == "src":
					srcs = append(srcs, a.Val)
				case n.Data == "a" && a.Key == "href" && a.Val == tc.image:
					links = append(links, a.Val)
				}
			}
		}
		switch {
		case tc.load && (len(srcs) != 1 || srcs[0] != tc.image):
			t.Errorf("%s: <img src> %q, want the image loaded", tc.image, srcs)
		case !tc.load && len(srcs) != 0:
			t.Errorf("%s: the operator's browser is made to fetch %q", tc.image, srcs)
		case len(links) == 0:
			t.Errorf("%s: not shown as a link", tc.image)
		}
		if !tc.load && !strings.Contains(string(body), "inspector.image_hosts") {
			t.Errorf("%s: the card does not say why the image is not loaded", tc.image)
		}

		res, err = http.Get(adm.URL + "/inspect?format=json&path=" + url.QueryEscape(path))
		if err != nil {
			t.Fatal(err)
		}
		var rep inspectReport
		err = json.NewDecoder(res.Body).Decode(&rep)
		res.Body.Close()
		if err != nil || rep.Card == nil || rep.Card.Image != tc.image || rep.Card.ImageOK != tc.load {
			t.Errorf("%s: json card %+v (%v), want image_loadable=%v", tc.image, rep.Card, err, tc.load)
		}
	}

	// Pages with no card load nothing.
	for _, path := range []string{"/inspect", "/inspect?path=nope"} {
		res, err := http.Get(adm.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'none';") {
			t.Errorf("%s: CSP %q", path, csp)
		}
	}
}

func TestImagePolicyNoHosts(t *testing.T) {
	ip := newImagePolicy("http://blog.example:8080", nil)
	if got := ip.imgSrc(); got != "http://blog.example:8080" {
		t.Errorf("img-src %q", got)
	}
	for raw, want := range map[string]bool{
		"http://blog.example:8080/a.png": true,
		"http://blog.example/a.png":      false,
		"https://blog.example:8080/a":    false,
		"/a.png":                         false,
		"data:image/png;base64,AAAA":     false,
		"//blog.example:8080/a.png":      false,
	} {
		if ip.allows(raw) != want {
			t.Errorf("allows(%q) = %v", raw, !want)
		}
	}
}
