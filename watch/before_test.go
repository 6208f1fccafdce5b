package watch

import (
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"
)

// TestEntryLayout: the start of the title and description fits in what
// the entry's layout pads anyway; a page's entry stays 136 B (the ≤ 256 B
// budget with the map is TestEntrySize's and TestMillionPages').
func TestEntryLayout(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n != 136 {
		t.Errorf("entry is %d B, want 136", n)
	}
}

// TestBeforeText: an event's before of a title or description is the
// start the entry kept — whole when short, cut on a rune boundary with
// "…" when longer — and the hash when the text was longer than the Fact
// keeps; hostile text stays text (the page escapes it: TestHandler).
func TestBeforeText(t *testing.T) {
	long := strings.Repeat("Very long title ", 6) // 96 B: the Fact keeps its hash alone
	for _, tc := range []struct{ name, before, after, want string }{
		{"short", "Boots", "Shoes", "Boots"},
		{"cut", "Winter boots for the whole family", "Boots", "Winter boots for…"},
		{"runes", "Ünïcödé tïtlé wïth áccents", "x", "Ünïcödé tït…"},
		{"hostile", `<script>x</script>`, "y", "<script>x</scrip…"},
		{"too long to keep", long, "z", "#"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatcher(t, 2, nil)
			a, b := facts(t, page(tc.before, "")), facts(t, page(tc.after, ""))
			w.Observe("/p", "", Response{Status: 200, Head: a})
			w.Observe("/p", "", Response{Status: 200, Head: b})
			w.Observe("/p", "", Response{Status: 200, Head: b})
			ev := w.Events("")
			if len(ev) != 1 || ev[0].Signal != "title" {
				t.Fatalf("events %+v", ev)
			}
			got := ev[0].Before
			if tc.want == "#" {
				if got != hashText(a.Title.Hash) {
					t.Errorf("before %q, want the hash %s", got, hashText(a.Title.Hash))
				}
				return
			}
			if got != tc.want || !utf8.ValidString(got) || len(strings.TrimSuffix(got, "…")) > titleKept {
				t.Errorf("before %q, want %q", got, tc.want)
			}
			if ev[0].After != tc.after {
				t.Errorf("after %q", ev[0].After)
			}
			// The next change's before is what the last one confirmed.
			w.Observe("/p", "", Response{Status: 200, Head: a})
			w.Observe("/p", "", Response{Status: 200, Head: a})
			if ev := w.Events(""); len(ev) != 2 || ev[0].Before != tc.after {
				t.Errorf("the second change: %+v", ev)
			}
		})
	}

	// The description's start, and a description that disappears: critical,
	// with what it said.
	w := newWatcher(t, 1, nil)
	with := facts(t, `<html><head><title>T</title><meta name="description" content="Warm wool boots, made in Norway."></head>`)
	without := facts(t, `<html><head><title>T</title></head>`)
	w.Observe("/d", "", Response{Status: 200, Head: with})
	w.Observe("/d", "", Response{Status: 200, Head: without})
	ev := w.Events(Critical)
	if len(ev) != 1 || ev[0].Signal != "description" || ev[0].Before != "Warm wool b…" || ev[0].After != "" {
		t.Errorf("description events %+v", ev)
	}

	// A flapping title (A/B) below confirm keeps the confirmed start.
	w = newWatcher(t, 3, nil)
	a, b := facts(t, page("Alpha title", "")), facts(t, page("Beta title", ""))
	w.Observe("/f", "", Response{Status: 200, Head: a})
	for range 10 {
		w.Observe("/f", "", Response{Status: 200, Head: b})
		w.Observe("/f", "", Response{Status: 200, Head: a})
	}
	if ev := w.Events(""); len(ev) != 0 {
		t.Errorf("a flapping title alerted: %+v", ev)
	}
	for range 3 {
		w.Observe("/f", "", Response{Status: 200, Head: b})
	}
	if ev := w.Events(""); len(ev) != 1 || ev[0].Before != "Alpha title" || ev[0].After != "Beta title" {
		t.Errorf("after the flapping: %+v", ev)
	}
}
