package schema

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a configuration: an HG code, where its key
// stands and what is wrong.
type Problem struct {
	Code    string // "HG140"
	File    string // the config file as named by the caller
	Line    int    // 1-based line of the key; 0 when the key is not in the file
	Key     string // "rule[3].open_graf"
	Message string
}

func (p Problem) String() string {
	loc := p.File
	if p.Line > 0 {
		loc = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	if p.Key == "" {
		return fmt.Sprintf("%s %s: %s", p.Code, loc, p.Message)
	}
	return fmt.Sprintf("%s %s: %s: %s", p.Code, loc, p.Key, p.Message)
}

// Problems is every problem found in one configuration. Load returns it as
// its error when the configuration is not valid.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Sort orders problems by line, then by code, keeping the order in which
// they were found for equal positions.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Code < ps[j].Code
	})
}
