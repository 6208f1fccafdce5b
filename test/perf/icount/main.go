// Command icount rewrites one page's head n times, for counting the
// instructions a document costs under callgrind: a figure that, unlike
// time, does not move with what else the machine is doing. icount.sh runs
// it twice and prints the difference per document; see docs/performance.md.
//
//	go run ./test/perf/icount [-config F] [-target T] [-whole] PAGE N
package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/headgate/headgate/rewrite"
	"github.com/headgate/headgate/rules"
)

//go:embed config.toml
var defaultConfig []byte

// writerOnly hides io.Discard's ReaderFrom, so that the copy goes through
// the 32 KiB buffer as it does in the proxy.
type writerOnly struct{ io.Writer }

func main() {
	config := flag.String("config", "", "config file (default: the property-test config)")
	target := flag.String("target", "/pages/hello-world?utm_source=feed", "request target to resolve")
	whole := flag.Bool("whole", false, "rewrite the whole page, not only its head")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: icount [-config F] [-target T] [-whole] PAGE N")
		os.Exit(2)
	}
	page, err := os.ReadFile(flag.Arg(0))
	check(err)
	n, err := strconv.Atoi(flag.Arg(1))
	check(err)
	if !*whole {
		page = headOf(page)
	}
	path := *config
	if path == "" {
		dir, err := os.MkdirTemp("", "icount")
		check(err)
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "headgate.toml")
		check(os.WriteFile(path, defaultConfig, 0o600))
	}
	cfg, err := rules.Load(path)
	check(err)
	buf := make([]byte, 32<<10)
	for range n {
		m := cfg.Resolve(*target)
		r := rewrite.NewReader(bytes.NewReader(page), rewrite.Options{Match: m, CorrectUpstream: true})
		_, err := io.CopyBuffer(writerOnly{io.Discard}, r, buf)
		check(err)
	}
	fmt.Println(len(page))
}

// headOf is the page through its first literal </head>, or its first 64 KiB
// (as rewrite's BenchmarkHead takes it).
func headOf(page []byte) []byte {
	if i := bytes.Index(bytes.ToLower(page), []byte("</head>")); i >= 0 {
		return page[:i+len("</head>")]
	}
	return page[:min(len(page), 64<<10)]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "icount:", err)
		os.Exit(1)
	}
}
