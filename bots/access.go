package bots

import (
	"fmt"
	"strings"
)

// PathMatcher is a compiled §2.2 path pattern; rules/ owns the syntax and
// the caller compiles `match` with it.
type PathMatcher interface {
	Match(path string) bool
}

// Access decides `[[bots.access]]`, `bots.spoofed` and
// `bots.enforce_robots` for an identity. It is immutable; build a new one
// on reload.
type Access struct {
	rules        []accessRule
	spoofedDeny  bool
	robots       func(group, path string) bool // true: the group's robots.txt disallows path
	robotsExempt func(path string) bool
}

type accessRule struct {
	any        bool
	names      map[string]bool
	categories map[Category]bool
	verified   string // "any" | "yes" | "no"
	match      PathMatcher
	deny       bool
}

// Reasons a request is denied, as Decide's rule when it is not an index
// into cfg.Access.
const (
	RuleNone    = -1 // allowed: no rule matched
	RuleSpoofed = -2 // bots.spoofed = "deny"
	RuleRobots  = -3 // bots.enforce_robots: robots.txt disallows the path for the crawler's group
)

// AccessOptions are Access's injected parts.
type AccessOptions struct {
	// Compile compiles a `match` pattern; nil, or an empty pattern, matches
	// every path.
	Compile func(pattern string) (PathMatcher, error)
	// Disallowed reports whether the served robots.txt disallows path for
	// the group of a crawler named group (the crawler's directory name);
	// nil turns enforce_robots off.
	Disallowed func(group, path string) bool
	// Exempt reports paths that are always served to crawlers under
	// enforce_robots (robots.txt, the sitemap files, llms.txt); nil:
	// "/robots.txt" and "/llms.txt" only.
	Exempt func(path string) bool
}

// NewAccess compiles the access part of cfg. An error names the key of the
// entry whose pattern does not compile.
func NewAccess(cfg Config, opt AccessOptions) (*Access, error) {
	a := &Access{spoofedDeny: cfg.Spoofed == "deny", robotsExempt: opt.Exempt}
	if cfg.EnforceRobots {
		a.robots = opt.Disallowed
	}
	if a.robotsExempt == nil {
		a.robotsExempt = func(p string) bool { return p == "/robots.txt" || p == "/llms.txt" }
	}
	for i, r := range cfg.Access {
		ar := accessRule{names: map[string]bool{}, categories: map[Category]bool{}, verified: r.Verified, deny: r.Action == "deny"}
		if ar.verified == "" {
			ar.verified = "any"
		}
		for _, n := range r.Crawlers {
			switch {
			case n == "*":
				ar.any = true
			case strings.HasPrefix(n, "@"):
				ar.categories[Category(n[1:])] = true
			default:
				ar.names[strings.ToLower(n)] = true
			}
		}
		if r.Match != "" && opt.Compile != nil {
			m, err := opt.Compile(r.Match)
			if err != nil {
				return nil, fmt.Errorf("bots.access[%d].match: %w", i, err)
			}
			ar.match = m
		}
		a.rules = append(a.rules, ar)
	}
	return a, nil
}

// Decide returns whether the request of id for path is denied, and why:
// the index of the first matching `[[bots.access]]` entry (first match
// wins, allow or deny), else RuleSpoofed or RuleRobots, else RuleNone. A
// request with no identity is never denied here.
func (a *Access) Decide(id Identity, path string) (deny bool, rule int) {
	if a == nil || !id.Known() {
		return false, RuleNone
	}
	for i := range a.rules {
		r := &a.rules[i]
		if !(r.any || r.names[id.Name] || (id.Category != "" && r.categories[id.Category])) {
			continue
		}
		switch r.verified {
		case "yes":
			if !id.Verified.Yes() {
				continue
			}
		case "no":
			if id.Verified != VerifiedNo {
				continue
			}
		}
		if r.match != nil && !r.match.Match(path) {
			continue
		}
		return r.deny, i
	}
	if a.spoofedDeny && id.Verified == VerifiedNo {
		return true, RuleSpoofed
	}
	if a.robots != nil && !a.robotsExempt(path) && a.robots(id.Name, path) {
		return true, RuleRobots
	}
	return false, RuleNone
}

// Reason names a rule Decide returned, for the access log and explain:
// "bots.access[2]", "bots.spoofed", "bots.enforce_robots", or "" for
// RuleNone.
func Reason(rule int) string {
	switch {
	case rule >= 0:
		return fmt.Sprintf("bots.access[%d]", rule)
	case rule == RuleSpoofed:
		return "bots.spoofed"
	case rule == RuleRobots:
		return "bots.enforce_robots"
	}
	return ""
}
