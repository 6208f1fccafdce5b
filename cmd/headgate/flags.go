package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/headgate/headgate/rules"
)

// buildVersion is set with -ldflags "-X main.buildVersion=v1.2.3".
var buildVersion = ""

func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// newFlags makes a subcommand's flag set with -config and a usage text.
func newFlags(name, synopsis string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("headgate "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := fs.String("config", defaultConfig(), "the TOML config file ($HEADGATE_CONFIG, else headgate.toml)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: headgate %s\n\n", synopsis)
		fs.PrintDefaults()
	}
	return fs, cfg
}

func defaultConfig() string {
	if c := os.Getenv("HEADGATE_CONFIG"); c != "" {
		return c
	}
	return "headgate.toml"
}

// parse parses flags, also those that follow an argument
// (`audit URL -max-pages 5` is what people type: the flag is honoured,
// never taken for a URL); "--" ends the flags. fs.Args() are then the
// arguments alone. It returns an exit code when the command should stop.
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK, true
			}
			return exitUsage, true
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if len(rest) == 0 {
			break
		}
		if consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	_ = fs.Parse(append([]string{"--"}, pos...))
	return 0, false
}

// load loads the config, printing every problem as check does.
func load(path string, stderr io.Writer) (*rules.Config, int) {
	cfg, err := rules.Load(path)
	if err != nil {
		var ps rules.Problems
		if errors.As(err, &ps) {
			for _, p := range ps {
				fmt.Fprintln(stderr, p)
			}
			fmt.Fprintf(stderr, "%s: %d problem(s)\n", path, len(ps))
		} else {
			fmt.Fprintf(stderr, "headgate: %v\n", err)
		}
		return nil, exitFix
	}
	return cfg, exitOK
}
