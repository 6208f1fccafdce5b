package watch

import "github.com/headgate/headgate/rules/watchconf"

// Config is `[watch]` (SPEC §20.2), declared and checked in
// rules/watchconf so that the config loader reads it without importing
// this package; Defaults and Check are watchconf's.
type Config = watchconf.Config

// Problem is one thing wrong with a Config (watchconf.Problem).
type Problem = watchconf.Problem

// Defaults returns the documented defaults (watchconf.Defaults).
func Defaults() Config { return watchconf.Defaults() }

// The webhook formats.
const (
	FormatJSON  = watchconf.FormatJSON
	FormatSlack = watchconf.FormatSlack
)

// The codes of Config.Check.
const (
	HGBadSignal   = watchconf.HGBadSignal
	HGBadConfirm  = watchconf.HGBadConfirm
	HGBadMaxPages = watchconf.HGBadMaxPages
	HGBadWebhook  = watchconf.HGBadWebhook
	HGBadFormat   = watchconf.HGBadFormat
	HGNoSignals   = watchconf.HGNoSignals
)
