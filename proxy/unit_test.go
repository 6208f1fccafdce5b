package proxy

import (
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestAcceptEncoding(t *testing.T) {
	prefs := []string{"zstd", "br", "gzip"}
	for _, tc := range []struct {
		in             string
		upstream, pick string
	}{
		{"", "", "identity"},
		{"identity", "", "identity"},
		{"gzip", "gzip", "gzip"},
		{"GZIP;Q=1.0", "gzip", "gzip"},
		{"x-gzip", "gzip", "gzip"},
		{"deflate", "deflate", "identity"},
		{"gzip, deflate, br, zstd", "zstd, br, gzip, deflate", "zstd"},
		{"br;q=0.5, gzip;q=0.8", "br;q=0.5, gzip;q=0.8", "gzip"},
		{"br;q=0.8, gzip;q=0.8", "br;q=0.8, gzip;q=0.8", "br"}, // tie: server order
		{"*", "zstd, br, gzip, deflate", "zstd"},
		{"*;q=0, gzip", "gzip", "gzip"},
		{"gzip;q=0", "", "identity"},
		{"gzip;q=bogus, br", "br", "br"},
		{"compress, sdch", "", "identity"},
		{" , ;q=1, br ; q=0.001", "br;q=0.001", "br"},
	} {
		ae := parseAcceptEncoding([]string{tc.in})
		if got := ae.upstream(); got != tc.upstream {
			t.Errorf("%q: upstream %q, want %q", tc.in, got, tc.upstream)
		}
		if got := ae.choose(prefs); got != tc.pick {
			t.Errorf("%q: choose %q, want %q", tc.in, got, tc.pick)
		}
	}
}

func TestETagRoundTrip(t *testing.T) {
	for _, up := range []string{`"abc"`, `W/"x-gzip"`, `""`, `"a,b"`} {
		w := wrapETag(up, "0123456789abcdef")
		got, ours, current := unwrapETag(w, "0123456789abcdef")
		if got != up || !ours || !current {
			t.Errorf("%s → %s → %s %v %v", up, w, got, ours, current)
		}
		if _, ours, current := unwrapETag(w, "fedcba9876543210"); !ours || current {
			t.Errorf("%s: another config's tag must be ours but not current", w)
		}
	}
	for _, bad := range []string{`abc`, "\"a\r\nX-Evil: 1\"", `"a"b"`, `W/`, ""} {
		if w := wrapETag(bad, "h"); w != "" {
			t.Errorf("wrapped invalid tag %q as %q", bad, w)
		}
	}
	// A forged headgate tag that decodes to a header injection is not ours.
	forged := `W/"hg.h.` + "IgpYLUV2aWw6IDEi" + `"` // base64url of "\"\nX-Evil: 1\""
	if _, ours, _ := unwrapETag(forged, "h"); ours {
		t.Errorf("forged tag accepted")
	}
}

func TestMapConditional(t *testing.T) {
	const h = "0123456789abcdef"
	cur, stale := wrapETag(`"v1"`, h), wrapETag(`"v0"`, "ffffffffffffffff")
	for _, tc := range []struct {
		in, out       string
		mapped, empty bool
	}{
		{`"a", "b"`, `"a", "b"`, false, false},
		{`*`, `*`, false, false},
		{cur, `"v1"`, true, false},
		{stale, ``, true, true},
		{`"x", ` + cur + `, ` + stale, `"x", "v1"`, true, false},
	} {
		out, mapped, empty := mapConditional(tc.in, h)
		if out != tc.out || mapped != tc.mapped || empty != tc.empty {
			t.Errorf("%s: %q %v %v, want %q %v %v", tc.in, out, mapped, empty, tc.out, tc.mapped, tc.empty)
		}
	}
}

func TestSetCanonicalLink(t *testing.T) {
	h := http.Header{}
	h.Add("Link", `</a>; rel="preload canonical", </b>; rel=preload; title="x, y", <https://e/c>; REL=Canonical`)
	h.Add("Link", `</d>; rel=next`)
	setCanonicalLink(h, "https://notes.example/p>q")
	want := []string{`</b>; rel=preload; title="x, y"`, `</d>; rel=next`, `<https://notes.example/p%3Eq>; rel="canonical"`}
	if got := h.Values("Link"); !reflect.DeepEqual(got, want) {
		t.Errorf("Link %q, want %q", got, want)
	}
}

// watched is a watcher of a new file c.toml that holds "a".
func watched(t *testing.T) (string, *watcher) {
	path := filepath.Join(t.TempDir(), "c.toml")
	os.WriteFile(path, []byte("a"), 0o644)
	return path, &watcher{path: path}
}

func TestWatcher(t *testing.T) {
	path, w := watched(t)
	if w.changed() {
		t.Error("first look is no change")
	}
	if w.changed() {
		t.Error("no change reported as one")
	}
	// Same content, new mtime: not a change.
	os.Chtimes(path, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	if w.changed() {
		t.Error("touch reported as a change")
	}
	os.WriteFile(path, []byte("b"), 0o644)
	if !w.changed() {
		t.Error("new content not seen")
	}
	os.Remove(path)
	if w.changed() {
		t.Error("a missing file is not a change")
	}
	os.WriteFile(filepath.Join(filepath.Dir(path), "d.toml"), []byte("c"), 0o644)
	os.Symlink("d.toml", path)
	if !w.changed() {
		t.Error("symlink to new content not seen")
	}
}

func TestWatcherDataFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "headgate.toml")
	table := filepath.Join(dir, "redirects.csv")
	if err := os.WriteFile(cfg, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table, []byte("from,to\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &watcher{path: cfg}
	w.changed()
	w.watch([]string{table})
	if w.changed() {
		t.Fatal("changed right after watch")
	}
	if err := os.WriteFile(table, []byte("from,to\n/a,/b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !w.changed() {
		t.Fatal("a changed data file is not a change")
	}
	if w.changed() {
		t.Fatal("changed twice for one change")
	}
	w.watch(nil)
	if err := os.WriteFile(table, []byte("from,to\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if w.changed() {
		t.Fatal("a file no longer watched is a change")
	}
}

// A file that changes from look to look (written in place) is reported
// once it holds still.
func TestWatcherSettled(t *testing.T) {
	path, w := watched(t)
	if w.settled() {
		t.Fatal("first look")
	}
	os.WriteFile(path, []byte("b, half"), 0o644)
	if w.settled() {
		t.Fatal("a change is reported before it holds still")
	}
	os.WriteFile(path, []byte("b, half written, then whole"), 0o644)
	if w.settled() {
		t.Fatal("a file still being written is reported")
	}
	if !w.settled() {
		t.Fatal("a change that held still for a look is not reported")
	}
	if w.settled() {
		t.Fatal("one change reported twice")
	}
}
