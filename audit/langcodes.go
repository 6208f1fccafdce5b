package audit

import (
	"strings"

	"github.com/headgate/headgate/internal/langcode"
)

// The code lists hreflang values are checked against (SPEC §15,
// hreflang-invalid-code) are internal/langcode's, which the hreflang
// table's loader reads too.

// hreflangProblem returns why an hreflang value is not one Google reads,
// "" when it is: "x-default", or an ISO 639-1 language, optionally a
// four-letter ISO 15924 script ("zh-Hant"), optionally an ISO 3166-1
// alpha-2 region ("en-GB", "zh-Hant-TW"). Case does not matter; the
// separator is "-" ("en_US" is not read).
func hreflangProblem(code string) string {
	c := strings.ToLower(strings.TrimSpace(code))
	if c == "x-default" {
		return ""
	}
	if c == "" {
		return "is empty"
	}
	if strings.Contains(c, "_") {
		return "uses \"_\": the separator is \"-\" (" + strings.ReplaceAll(clip(strings.TrimSpace(code), 40), "_", "-") + ")"
	}
	parts := strings.Split(c, "-")
	if !langcode.Language(parts[0]) {
		if len(parts[0]) == 2 {
			return "names no ISO 639-1 language: \"" + clip(parts[0], 40) + "\" is not one"
		}
		return "does not start with a two-letter ISO 639-1 language code"
	}
	rest := parts[1:]
	if len(rest) > 0 && len(rest[0]) == 4 && isLetters(rest[0]) {
		rest = rest[1:] // an ISO 15924 script
	}
	switch {
	case len(rest) == 0:
		return ""
	case len(rest) > 1:
		return "has more than a language, a script and a region"
	case !langcode.Region(rest[0]):
		return "names no ISO 3166-1 alpha-2 region: \"" + clip(rest[0], 40) + "\" is not one"
	}
	return ""
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
