package bots

import (
	"io"
	"net/netip"

	"github.com/headgate/headgate/bots/botconfig"
)

// The `[bots]` config, the crawler directory and the range files are
// package botconfig's, which imports nothing of net/http, so that rules
// can read and check `[bots]` at load and still know nothing of HTTP
// (SPEC §9). They are this package's too, by these aliases: callers use
// bots.Config, bots.Directory, bots.ParseRanges as before.

type (
	Config       = botconfig.Config
	Duration     = botconfig.Duration
	AccessRule   = botconfig.AccessRule
	Problem      = botconfig.Problem
	Category     = botconfig.Category
	RangesFormat = botconfig.RangesFormat
	Crawler      = botconfig.Crawler
	Ranges       = botconfig.Ranges
	RangesError  = botconfig.RangesError
)

// The HG codes of Config.Check.
const (
	HGRangesFile   = botconfig.HGRangesFile
	HGUnknownName  = botconfig.HGUnknownName
	HGBadCrawler   = botconfig.HGBadCrawler
	HGBadDuration  = botconfig.HGBadDuration
	HGBadSize      = botconfig.HGBadSize
	HGNoCrawlers   = botconfig.HGNoCrawlers
	HGBadAction    = botconfig.HGBadAction
	HGBadVerified  = botconfig.HGBadVerified
	HGBadResolver  = botconfig.HGBadResolver
	HGBadDirectory = botconfig.HGBadDirectory
)

// The categories, and the range file format.
const (
	Search         = botconfig.Search
	AITraining     = botconfig.AITraining
	AISearch       = botconfig.AISearch
	AIAssistant    = botconfig.AIAssistant
	Preview        = botconfig.Preview
	SEOTool        = botconfig.SEOTool
	Monitor        = botconfig.Monitor
	FormatPrefixes = botconfig.FormatPrefixes
	MaxRangesFile  = botconfig.MaxRangesFile
)

// Categories lists every category, in the order docs/bots.md lists them.
var Categories = botconfig.Categories

// Defaults returns the documented defaults.
func Defaults() Config { return botconfig.Defaults() }

// Directory returns a fresh copy of the built-in directory.
func Directory() []Crawler { return botconfig.Directory() }

// Merge returns base with extra's entries added or merged in, and
// categories applied.
func Merge(base, extra []Crawler, categories map[string]Category) []Crawler {
	return botconfig.Merge(base, extra, categories)
}

// ParseRanges reads a range file in the published JSON format.
func ParseRanges(r io.Reader) (*Ranges, error) { return botconfig.ParseRanges(r) }

// NewRanges builds a set of prefixes.
func NewRanges(ps []netip.Prefix) *Ranges { return botconfig.NewRanges(ps) }

func knownCategory(c Category) bool { return botconfig.KnownCategory(c) }

func agentOrigin(s string) (string, error) { return botconfig.AgentOrigin(s) }
