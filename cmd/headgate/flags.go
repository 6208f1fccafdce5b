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

// version is the module version (buildVersion, else what the build info
// says: a tag for go install …@v1.2.3, "devel" for a build in a clone),
// followed by the VCS revision the binary was built from, when the build
// recorded one: "devel (rev 47b2138c1f0e, modified)".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	return versionOf(buildVersion, bi, ok)
}

func versionOf(set string, bi *debug.BuildInfo, ok bool) string {
	v := set
	if v == "" && ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	if v == "" {
		v = "devel"
	}
	if !ok {
		return v
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v += " (rev " + rev
	if modified == "true" {
		v += ", modified"
	}
	return v + ")"
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
