package insight

import "testing"

func TestSource(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"google", "https://www.google.com/", "google"},
		{"google bare", "https://google.com/search?q=x", "google"},
		{"google uk", "https://www.google.co.uk/", "google"},
		{"google de", "https://www.google.de/", "google"},
		{"google br", "https://www.google.com.br/url?q=x", "google"},
		{"google news", "https://news.google.com/articles/x", "google"},
		{"google upper case", "HTTPS://WWW.GOOGLE.COM/", "google"},
		{"google port and dot", "https://www.google.com.:443/", "google"},
		{"google app", "android-app://com.google.android.googlequicksearchbox/", "google"},
		{"gemini before google", "https://gemini.google.com/app/123", "gemini"},
		{"bing", "https://www.bing.com/search?q=x", "bing"},
		{"bing cn", "https://cn.bing.com/", "bing"},
		{"duckduckgo", "https://duckduckgo.com/", "duckduckgo"},
		{"yandex", "https://yandex.ru/search/?text=x", "yandex"},
		{"yandex com tr", "https://yandex.com.tr/", "yandex"},
		{"baidu", "https://www.baidu.com/link?url=x", "baidu"},
		{"ecosia", "https://www.ecosia.org/search?q=x", "ecosia"},
		{"chatgpt", "https://chatgpt.com/", "chatgpt"},
		{"chatgpt old host", "https://chat.openai.com/c/1", "chatgpt"},
		{"perplexity", "https://www.perplexity.ai/search/x", "perplexity"},
		{"perplexity bare", "https://perplexity.ai/", "perplexity"},
		{"claude", "https://claude.ai/chat/1", "claude"},
		{"copilot", "https://copilot.microsoft.com/", "copilot"},
		{"you", "https://you.com/search?q=x", "you"},
		{"phind", "https://www.phind.com/search", "phind"},
		{"http scheme", "http://duckduckgo.com/", "duckduckgo"},
		{"userinfo", "https://x@www.bing.com/", "bing"},

		{"spoof suffix", "https://google.evil.com/", ""},
		{"spoof prefix", "https://evilgoogle.com/", ""},
		{"spoof hyphen", "https://my-google.com/", ""},
		{"spoof long tld", "https://www.google.co.evil/", ""},
		{"spoof subdomain of other", "https://www.google.com.evil.com/", ""},
		{"spoof chatgpt", "https://chatgpt.com.evil.net/", ""},
		{"spoof claude", "https://notclaude.ai/", ""},
		{"spoof bing", "https://bing.com.example/", ""},
		{"userinfo spoof", "https://www.google.com@evil.com/", ""},
		{"host in path", "https://evil.com/www.google.com", ""},
		{"host in query", "https://evil.com/?r=https://www.bing.com/", ""},
		{"openai but not chat", "https://openai.com/", ""},
		{"microsoft but not copilot", "https://www.microsoft.com/", ""},
		{"no scheme", "www.google.com", ""},
		{"relative", "/from/here", ""},
		{"other scheme", "ftp://www.google.com/", ""},
		{"other app", "android-app://com.example.app/", ""},
		{"ipv6", "https://[::1]/", ""},
		{"empty", "", ""},
		{"just scheme", "https://", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Source(tt.in)
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("Source(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
			}
		})
	}
}

func TestSourceDoesNotAllocate(t *testing.T) {
	for _, ref := range []string{"https://www.google.co.uk/", "https://gemini.google.com/", "https://evil.example/", "HTTPS://CHATGPT.COM/"} {
		if n := testing.AllocsPerRun(100, func() { Source(ref) }); n != 0 {
			t.Errorf("Source(%q): %v allocations", ref, n)
		}
	}
}

// Every source the list names is documented with its hosts in
// docs/operations.md (the docs test of the module checks the page).
func TestSourcesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Sources() {
		if seen[s] {
			t.Errorf("source %q twice", s)
		}
		seen[s] = true
	}
	if len(seen) < 15 {
		t.Errorf("only %d sources", len(seen))
	}
}
