package proxy

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Issue 34 item 9: a UTF-8 path typed into the inspector's form arrives
// decoded ("/wiki/Café_au_lait" from the browser's %C3%A9) and was refused
// with "byte 'Ã'". It is percent-encoded per §16.4 and asked as the proxy
// would be asked.
func TestInspectTypedUTF8Path(t *testing.T) {
	var got []string
	f := newInspector(t, func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.RequestURI())
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><html><head><title>Café au lait</title></head><body>x</body></html>"))
	}, "")
	for _, c := range []struct{ typed, want string }{
		{"/wiki/Café_au_lait", "/wiki/Caf%C3%A9_au_lait"},
		{"/wiki/東京?action=view", "/wiki/%E6%9D%B1%E4%BA%AC?action=view"},
		{"/wiki/Caf%c3%a9", "/wiki/Caf%c3%a9"}, // already a target: as typed
		{"/search?q=Müll", "/search?q=M%C3%BCll"},
	} {
		for _, format := range []string{"", "json"} {
			got = nil
			q := url.Values{"path": {c.typed}}
			if format != "" {
				q.Set("format", format)
			}
			code, _, body := f.get(t, f.admin, "/inspect", q)
			if code != http.StatusOK {
				t.Errorf("%q format %q: %d, want 200\n%s", c.typed, format, code, body)
				continue
			}
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("%q: the upstream was asked %q, want %q", c.typed, got, c.want)
			}
		}
	}
	// Not UTF-8, or a space: still 400, and the upstream is not asked.
	for _, bad := range []string{"/caf\xe9", "/a b"} {
		got = nil
		if code, _, _ := f.get(t, f.admin, "/inspect", url.Values{"path": {bad}}); code != http.StatusBadRequest || len(got) != 0 {
			t.Errorf("%q: %d, upstream asked %q; want 400 and no request", bad, code, got)
		}
	}
}

// The form's placeholder is a path of this config, not the demo's
// /notes/3 on every site.
func TestInspectPlaceholderFromConfig(t *testing.T) {
	for _, c := range []struct{ rules, want string }{
		{"", `placeholder="/"`},
		{"[[rule]]\nmatch = \"/wiki/:page\"\nsitemap = true\nsitemap_entries = [{ params = { page = \"Main_Page\" } }]\n", `placeholder="/wiki/Main_Page"`},
		{"[[rule]]\nmatch = \"/about\"\nsitemap = true\n", `placeholder="/about"`},
	} {
		f := newInspector(t, htmlPage(notePage), c.rules)
		for _, q := range []url.Values{nil, {"path": {"no-slash"}}, {"path": {"/x"}}} {
			_, _, body := f.get(t, f.admin, "/inspect", q)
			if !bytes.Contains(body, []byte(c.want)) || strings.Contains(string(body), `placeholder="/notes/3"`) {
				i := bytes.Index(body, []byte("placeholder="))
				t.Errorf("rules %q, query %v: want %s, got %s", c.rules, q, c.want, body[max(i, 0):min(max(i, 0)+40, len(body))])
			}
		}
	}
}
