package rewrite

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The html5lib-tests tree-construction documents (testdata/html5lib, MIT,
// see its LICENSE; html5lib/html5lib-tests at 9329e64, the last commit
// before the suite moved to WPT) as a property test, SPEC §23: they were
// written to break HTML parsers, not by us, and they run in every clone.
// The expected trees in the files are not read: x/net/html's parser is the
// oracle, run on the input and on headgate's output.

// html5libDoc is one #data section of a .dat file.
type html5libDoc struct {
	name string // "tests1.dat:12" (file and the line of its #data)
	data []byte
}

// loadHTML5Lib reads every document of testdata/html5lib/**/*.dat, leaving
// out the #document-fragment cases (a fragment is parsed in a context
// element: no head to rewrite).
func loadHTML5Lib(t testing.TB) []html5libDoc {
	t.Helper()
	files, err := filepath.Glob("testdata/html5lib/*.dat")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("testdata/html5lib/*/*.dat")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no testdata/html5lib/*.dat")
	}
	var docs []html5libDoc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, parseDat(strings.TrimPrefix(f, "testdata/html5lib/"), b)...)
	}
	return docs
}

// parseDat splits a .dat file into its documents. A test is "#data", the
// document's lines, then "#errors" and further sections; the newline before
// "#errors" is not part of the document.
func parseDat(name string, b []byte) []html5libDoc {
	var docs []html5libDoc
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	var cur []string
	inData, fragment := false, false
	start, line := 0, 0
	flush := func() {
		if cur != nil && !fragment {
			docs = append(docs, html5libDoc{fmt.Sprintf("%s:%d", name, start), []byte(strings.Join(cur, "\n"))})
		}
		cur, fragment = nil, false
	}
	for sc.Scan() {
		line++
		l := sc.Text()
		switch {
		case l == "#data":
			flush()
			inData, start, cur = true, line, []string{}
		case inData && strings.HasPrefix(l, "#errors"):
			inData = false
		case inData:
			cur = append(cur, l)
		case l == "#document-fragment":
			fragment = true
		}
	}
	flush()
	return docs
}

// TestHTML5LibPassThrough: with no rules, every document goes out byte for
// byte as it came.
func TestHTML5LibPassThrough(t *testing.T) {
	noRules := mustMatch(t, "[server]\nupstream = \"http://127.0.0.1:3000\"\n[site]\nbase_url = \"https://headgate.test\"\n", propTarget)
	docs := loadHTML5Lib(t)
	held := 0
	for _, d := range docs {
		ok := true
		for _, opts := range []Options{{}, {Match: noRules}} {
			out, res, err := rewriteBytes(d.data, opts)
			if err != nil || !bytes.Equal(out, d.data) || res.Outcome == Rewritten {
				ok = false
				t.Errorf("%s: no rules: output differs (outcome %s, err %v)\n\tin:  %q\n\tout: %q", d.name, res.Outcome, err, d.data, out)
			}
		}
		if ok {
			held++
		}
	}
	t.Logf("html5lib tree-construction, no rules: %d/%d documents byte-identical", held, len(docs))
}

// TestHTML5LibRules: with rules, a document is either rewritten — its DOM
// outside the head is the upstream's, and the written tags are in the head,
// with a parser's scripting flag on and off — or passed through unchanged
// with an outcome that says so.
//
// Most of the suite's documents have no doctype and nothing else that says
// "document" (§16.1): headgate passes them through as fragments. So that
// they are rewritten and checked too, every such document runs a second
// time behind "<!DOCTYPE html>".
func TestHTML5LibRules(t *testing.T) {
	m := mustMatch(t, propConfig, propTarget)
	docs := loadHTML5Lib(t)
	for _, d := range docs[:len(docs):len(docs)] {
		if !bytes.HasPrefix(bytes.ToLower(d.data), []byte("<!doctype")) {
			docs = append(docs, html5libDoc{d.name + "+doctype", append([]byte("<!DOCTYPE html>"), d.data...)})
		}
	}
	outcomes := map[Outcome]int{}
	held := map[bool]int{}
	for _, d := range docs {
		out, res, err := rewriteBytes(d.data, Options{Match: m, CorrectUpstream: true})
		if err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		outcomes[res.Outcome]++
		if res.Outcome != Rewritten {
			if !bytes.Equal(out, d.data) {
				t.Errorf("%s: outcome %s but the output differs", d.name, res.Outcome)
				continue
			}
			held[true]++
			held[false]++
			continue
		}
		checkResult(t, d.data, out, res)
		for _, scripting := range []bool{true, false} {
			problems := domProblems(d.data, out, scripting)
			if len(problems) == 0 {
				held[scripting]++
				continue
			}
			t.Errorf("%s (scripting %v): %s\n\tin:  %q\n\tout: %q", d.name, scripting, summarize(problems), d.data, out)
		}
	}
	t.Logf("html5lib tree-construction, with rules: scripting on %d/%d hold, scripting off %d/%d hold; outcomes %v",
		held[true], len(docs), held[false], len(docs), outcomes)
}

// domProblems compares the documents x/net/html builds from in and out:
// the written tags must be in out's head, and everything outside the head
// (the body, comments after it, the html element's attributes) the same,
// but for elements of the replaced kinds: a test that expects headgate to
// remove an upstream tag a parser reads in the body names their atoms.
func domProblems(in, out []byte, scripting bool, replaced ...atom.Atom) []string {
	opt := html.ParseOptionEnableScripting(scripting)
	problems := checkHead(out, opt)
	a, err1 := outsideHead(in, opt, replaced)
	b, err2 := outsideHead(out, opt, replaced)
	if err1 != nil || err2 != nil {
		return append(problems, fmt.Sprintf("render: %v %v", err1, err2))
	}
	if a != b {
		i := commonPrefix([]byte(a), []byte(b))
		problems = append(problems, fmt.Sprintf("the DOM outside the head differs at %d: upstream %q, output %q", i, around([]byte(a), i), around([]byte(b), i)))
	}
	return problems
}

// outsideHead renders the document doc parses to, without its head's
// children and without elements of the skipped kinds.
func outsideHead(doc []byte, opt html.ParseOption, skip []atom.Atom) (string, error) {
	root, err := parseHTML(doc, opt)
	if err != nil {
		return "", err
	}
	head, _ := headAndBody(root)
	var drop []*html.Node
	forEach(root, func(n *html.Node) {
		if n.Parent == head && head != nil || n.Type == html.ElementNode && slices.Contains(skip, n.DataAtom) {
			drop = append(drop, n)
		}
	})
	for _, n := range drop {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	var w strings.Builder
	err = html.Render(&w, root)
	return w.String(), err
}
