// Package botconfig is the part of package bots that needs no HTTP: the
// `[bots]` config (Config, Defaults, Config.Check with HG200–HG209), the
// built-in crawler directory (Directory, Merge) and the published range
// files (ParseRanges, Ranges). rules imports it to read and check `[bots]`
// at load and still knows nothing of HTTP (SPEC §9); package bots, which
// verifies requests, re-exports every name (bots.Config is
// botconfig.Config), so its callers never name this package.
//
// It imports only the standard library, and no net/http.
package botconfig
