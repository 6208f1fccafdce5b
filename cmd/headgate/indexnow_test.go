package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headgate/headgate/rules"
	"github.com/headgate/headgate/sitemap"
)

// receiver is an IndexNow endpoint on 127.0.0.1 that records every POST
// and answers with the statuses queued in answers (then 200).
type receiver struct {
	mu      sync.Mutex
	posts   []indexnowPost
	answers []func(w http.ResponseWriter)
}

type indexnowPost struct {
	Host        string   `json:"host"`
	Key         string   `json:"key"`
	KeyLocation string   `json:"keyLocation"`
	URLList     []string `json:"urlList"`
	at          time.Time
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p indexnowPost
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&p) != nil {
		http.Error(w, "bad request", 400)
		return
	}
	p.at = time.Now()
	rc.mu.Lock()
	rc.posts = append(rc.posts, p)
	var answer func(http.ResponseWriter)
	if len(rc.answers) > 0 {
		answer, rc.answers = rc.answers[0], rc.answers[1:]
	}
	rc.mu.Unlock()
	if answer != nil {
		answer(w)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *receiver) take() []indexnowPost {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	p := rc.posts
	rc.posts = nil
	return p
}

// notesApp is the upstream: /notes.jsonl lists the notes it holds.
type notesApp struct {
	mu    sync.Mutex
	notes map[int]string // id → lastmod
}

func (a *notesApp) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/notes.jsonl" {
		http.NotFound(w, r)
		return
	}
	a.mu.Lock()
	ids := make([]int, 0, len(a.notes))
	for id := range a.notes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "{\"params\": {\"id\": \"%d\"}, \"lastmod\": %q}\n", id, a.notes[id])
	}
	a.mu.Unlock()
	io.WriteString(w, b.String())
}

func (a *notesApp) set(id int, lastmod string) {
	a.mu.Lock()
	a.notes[id] = lastmod
	a.mu.Unlock()
}

const indexnowKey = "a1b2c3d4-e5f6-7788"

func indexnowSetup(t *testing.T) (app *notesApp, rc *receiver, cfgPath, state string) {
	t.Helper()
	app = &notesApp{notes: map[int]string{1: "2026-01-01", 2: "2026-01-02", 3: "2026-01-03"}}
	up := httptest.NewServer(app)
	t.Cleanup(up.Close)
	rc = &receiver{}
	ep := httptest.NewServer(rc)
	t.Cleanup(ep.Close)
	dir := t.TempDir()
	cfgPath = filepath.Join(dir, "headgate.toml")
	cfg := fmt.Sprintf(`[server]
upstream = %q
[site]
base_url = "https://notes.example"
[sitemap]
max_urls = 100000
[[rule]]
match = "/notes/:id{[0-9]+}"
sitemap = true
sitemap_source = "upstream:/notes.jsonl"
[indexnow]
key = %q
endpoint = %q
`, up.URL, indexnowKey, ep.URL+"/indexnow")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return app, rc, cfgPath, filepath.Join(dir, "indexnow.state")
}

func noteURL(id int) string { return fmt.Sprintf("https://notes.example/notes/%d", id) }

// TestIndexNowEndToEnd runs headgate indexnow against a real upstream and
// a real receiver on loopback, run after run on one state file.
func TestIndexNowEndToEnd(t *testing.T) {
	app, rc, cfgPath, state := indexnowSetup(t)
	indexnow := func(want int, extra ...string) string {
		t.Helper()
		code, out, errs := runCmd(t, "", append([]string{"indexnow", "-config", cfgPath, "-state", state}, extra...)...)
		if code != want {
			t.Fatalf("exit %d, want %d\n%s%s", code, want, out, errs)
		}
		return errs
	}

	// 1. First run: the state is recorded, nothing is submitted.
	indexnow(exitOK)
	if p := rc.take(); len(p) != 0 {
		t.Fatalf("first run submitted %d batches", len(p))
	}
	st, err := os.ReadFile(state)
	if err != nil || strings.Count(string(st), "\n") != 4 {
		t.Fatalf("state after the first run: %v\n%s", err, st)
	}

	// 2. A changed lastmod and a new entry: submitted once, in one batch.
	app.set(2, "2026-02-02")
	app.set(4, "2026-02-04")
	indexnow(exitOK)
	posts := rc.take()
	if len(posts) != 1 {
		t.Fatalf("%d POSTs, want 1", len(posts))
	}
	p := posts[0]
	if got := p.URLList; !slices.Equal(got, []string{noteURL(2), noteURL(4)}) {
		t.Errorf("urlList %v", got)
	}
	if p.Host != "notes.example" || p.Key != indexnowKey || p.KeyLocation != "https://notes.example/"+indexnowKey+".txt" {
		t.Errorf("payload %+v", p)
	}
	indexnow(exitOK)
	if p := rc.take(); len(p) != 0 {
		t.Errorf("an unchanged sitemap submitted %d batches", len(p))
	}

	// 3. 25,000 changes go in 3 batches of at most 10,000.
	for id := 10; id < 25010; id++ {
		app.set(id, "2026-03-01")
	}
	indexnow(exitOK)
	posts = rc.take()
	var sizes []int
	seen := map[string]bool{}
	for _, p := range posts {
		sizes = append(sizes, len(p.URLList))
		for _, u := range p.URLList {
			seen[u] = true
		}
	}
	if !slices.Equal(sizes, []int{10000, 10000, 5000}) || len(seen) != 25000 {
		t.Errorf("batches of %v (%d distinct URLs), want 10000, 10000, 5000", sizes, len(seen))
	}

	// 4. A 429 with Retry-After: 1 is retried, then succeeds.
	app.set(1, "2026-04-01")
	rc.mu.Lock()
	rc.answers = []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
	}}
	rc.mu.Unlock()
	indexnow(exitOK)
	posts = rc.take()
	if len(posts) != 2 || !slices.Equal(posts[0].URLList, []string{noteURL(1)}) || !slices.Equal(posts[1].URLList, posts[0].URLList) {
		t.Fatalf("429 then 200: %d POSTs %+v", len(posts), posts)
	}
	if d := posts[1].at.Sub(posts[0].at); d < time.Second {
		t.Errorf("retried after %v, before Retry-After: 1", d)
	}

	// 5. A 403 fails the run with exit 1 and writes no state; the next
	// run submits the same URLs.
	app.set(3, "2026-05-03")
	app.set(99999, "2026-05-04")
	before, _ := os.ReadFile(state)
	rc.mu.Lock()
	rc.answers = []func(http.ResponseWriter){func(w http.ResponseWriter) { http.Error(w, "key not valid", http.StatusForbidden) }}
	rc.mu.Unlock()
	errs := indexnow(exitFix)
	if !strings.Contains(errs, "403") || !strings.Contains(errs, "the state is not written") {
		t.Errorf("stderr of the failed run:\n%s", errs)
	}
	failed := rc.take()
	if after, _ := os.ReadFile(state); string(after) != string(before) {
		t.Errorf("a failed run changed the state")
	}
	indexnow(exitOK)
	again := rc.take()
	if len(failed) != 1 || len(again) != 1 || !slices.Equal(failed[0].URLList, again[0].URLList) ||
		!slices.Equal(again[0].URLList, []string{noteURL(3), noteURL(99999)}) {
		t.Errorf("403 run sent %+v; the next run sent %+v", failed, again)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(state), ".indexnow.state*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}

	// 6. -dry-run and -all.
	indexnow(exitOK, "-dry-run", "-all")
	if p := rc.take(); len(p) != 0 {
		t.Errorf("-dry-run submitted %d batches", len(p))
	}
}

func TestIndexNowUsage(t *testing.T) {
	_, _, cfgPath, state := indexnowSetup(t)
	if code, _, errs := runCmd(t, "", "indexnow", "-config", cfgPath); code != exitUsage || !strings.Contains(errs, "-state") {
		t.Errorf("without -state: exit %d %s", code, errs)
	}
	noKey := filepath.Join(t.TempDir(), "h.toml")
	os.WriteFile(noKey, []byte("[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n[[rule]]\nmatch = \"/\"\nsitemap = true\n"), 0o644)
	if code, _, errs := runCmd(t, "", "indexnow", "-config", noKey, "-state", state); code != exitFix || !strings.Contains(errs, "[indexnow]") {
		t.Errorf("without [indexnow]: exit %d %s", code, errs)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n[indexnow]\nkey = \"has space!\"\n"), 0o644)
	if code, _, errs := runCmd(t, "", "indexnow", "-config", bad, "-state", state); code != exitFix || !strings.Contains(errs, "HG192") {
		t.Errorf("a bad key: exit %d %s", code, errs)
	}
	if _, err := os.Stat(state); err == nil {
		t.Errorf("a failed run wrote the state")
	}
}

// TestIndexNowKeyFile: headgate serves the key at /{key}.txt as
// text/plain.
func TestIndexNowKeyFile(t *testing.T) {
	_, _, cfgPath, _ := indexnowSetup(t)
	cfg, err := rules.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	s := sitemap.New(cfg, sitemap.Options{})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest("GET", "/"+indexnowKey+".txt", nil))
	if !s.Handles("/"+indexnowKey+".txt") || w.Code != 200 || w.Body.String() != indexnowKey ||
		w.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("key file: %d %q %v", w.Code, w.Body, w.Header())
	}
	if s.Handles("/other.txt") {
		t.Errorf("another .txt is headgate's")
	}
}
