package insight

import "strings"

// A referral source and the hosts that count as it. A host matches a
// domain when it equals it or ends with "." + domain; the first source
// that matches wins, so gemini.google.com is gemini, not google.
// docs/operations.md lists the same table; keep them together.
type referrer struct {
	source  string
	domains []string
	match   func(host string) bool // besides domains
}

// referrers is the documented list (docs/operations.md, "What crawlers
// do"), in the order it is tried.
var referrers = []referrer{
	{"gemini", []string{"gemini.google.com", "bard.google.com"}, nil},
	{"google", nil, isGoogleHost}, // every country domain: google.co.uk, www.google.com.br
	{"bing", []string{"bing.com"}, nil},
	{"duckduckgo", []string{"duckduckgo.com"}, nil},
	{"yandex", []string{"yandex.ru", "yandex.com", "yandex.com.tr", "yandex.by", "yandex.kz", "yandex.uz", "ya.ru"}, nil},
	{"baidu", []string{"baidu.com"}, nil},
	{"ecosia", []string{"ecosia.org"}, nil},
	{"yahoo", []string{"search.yahoo.com", "search.yahoo.co.jp"}, nil},
	{"brave", []string{"search.brave.com"}, nil},
	{"qwant", []string{"qwant.com"}, nil},
	{"startpage", []string{"startpage.com"}, nil},
	{"seznam", []string{"seznam.cz"}, nil},
	{"naver", []string{"search.naver.com"}, nil},
	{"chatgpt", []string{"chatgpt.com", "chat.openai.com"}, nil},
	{"perplexity", []string{"perplexity.ai"}, nil},
	{"claude", []string{"claude.ai"}, nil},
	{"copilot", []string{"copilot.microsoft.com", "copilot.cloud.microsoft"}, nil},
	{"you", []string{"you.com"}, nil},
	{"phind", []string{"phind.com"}, nil},
	{"mistral", []string{"chat.mistral.ai"}, nil},
	{"deepseek", []string{"chat.deepseek.com"}, nil},
	{"meta-ai", []string{"meta.ai"}, nil},
	{"grok", []string{"grok.com"}, nil},
}

// sourceNames holds every label, in the documented order.
var sourceNames = func() []string {
	var names []string
	for _, r := range referrers {
		names = append(names, r.source)
	}
	return names
}()

// Sources returns the referral source labels headgate counts, in the
// documented order.
func Sources() []string { return append([]string(nil), sourceNames...) }

// sourceIndex returns the index in sourceNames of referer's source, or -1.
func sourceIndex(referer string) int {
	host := refererHost(referer)
	if host == "" {
		return -1
	}
	for i, r := range referrers {
		for _, d := range r.domains {
			if hostIs(host, d) {
				return i
			}
		}
		if r.match != nil && r.match(host) {
			return i
		}
	}
	return -1
}

// Source classifies a Referer field value: the search engine or AI
// assistant its host belongs to (docs/operations.md lists them), and
// whether it is one. It does not allocate. A Referer names what the client
// says it came from: it counts visits, it proves nothing.
func Source(referer string) (string, bool) {
	if i := sourceIndex(referer); i >= 0 {
		return sourceNames[i], true
	}
	return "", false
}

// refererHost returns the host of an absolute http(s) Referer (or an
// android-app: one, whose "host" is the app's package name), without
// userinfo, port or a trailing dot; "" when there is none. It slices its
// input; case is left alone (hostIs folds).
func refererHost(ref string) string {
	rest, ok := cutPrefixFold(ref, "https://")
	if !ok {
		if rest, ok = cutPrefixFold(ref, "http://"); !ok {
			if rest, ok = cutPrefixFold(ref, "android-app://"); !ok {
				return ""
			}
			if host, _, _ := strings.Cut(rest, "/"); strings.EqualFold(host, "com.google.android.googlequicksearchbox") ||
				strings.EqualFold(host, "com.google.android.gm") {
				return "www.google.com" // the Google app
			}
			return ""
		}
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if strings.HasPrefix(rest, "[") { // an IPv6 literal is no one's search engine
		return ""
	}
	if i := strings.IndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSuffix(rest, ".")
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// hostIs reports whether host is domain or a subdomain of it.
func hostIs(host, domain string) bool {
	if len(host) == len(domain) {
		return strings.EqualFold(host, domain)
	}
	return len(host) > len(domain) && host[len(host)-len(domain)-1] == '.' &&
		strings.EqualFold(host[len(host)-len(domain):], domain)
}

// isGoogleHost reports whether host is Google Search on any of its
// country domains: [sub.]google.TLD where TLD is com, a two-letter
// country code, co.CC or com.CC (google.co.uk, www.google.com.br).
// google.evil.com and evilgoogle.com are not.
func isGoogleHost(host string) bool {
	// Find the label "google" followed by one or two suffix labels.
	for start := 0; start < len(host); {
		end := strings.IndexByte(host[start:], '.')
		if end < 0 {
			return false
		}
		label, rest := host[start:start+end], host[start+end+1:]
		if strings.EqualFold(label, "google") && googleSuffix(rest) {
			return true
		}
		start += end + 1
	}
	return false
}

func googleSuffix(s string) bool {
	first, second, two := strings.Cut(s, ".")
	if !two {
		return strings.EqualFold(first, "com") || isCC(first)
	}
	if strings.Contains(second, ".") {
		return false
	}
	return (strings.EqualFold(first, "co") || strings.EqualFold(first, "com")) && isCC(second)
}

// isCC reports whether s looks like a country-code TLD (two letters).
func isCC(s string) bool {
	return len(s) == 2 && isLetter(s[0]) && isLetter(s[1])
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
