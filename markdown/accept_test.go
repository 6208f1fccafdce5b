package markdown

import "testing"

func TestPrefers(t *testing.T) {
	tests := []struct {
		accept string
		want   bool
	}{
		{"", false},
		{"text/markdown", true},
		{"TEXT/Markdown", true},
		{"text/html", false},
		{"*/*", false},
		{"text/*", false},
		{"text/markdown, text/html", false}, // a tie goes to HTML
		{"text/html, text/markdown", false},
		{"text/markdown, text/html;q=0.9", true},
		{"text/html;q=0.9, text/markdown", true},
		{"text/markdown;q=0.5, text/html;q=0.4", true},
		{"text/markdown;q=0.5, text/html;q=0.5", false},
		{"text/markdown;q=0.501, text/html;q=0.5", true},
		{"text/markdown, */*;q=0.8", true},
		{"text/markdown;q=0.9, */*", false}, // */* gives HTML q=1
		{"text/markdown;q=0.9, text/*;q=0.5", true},
		{"text/*;q=0.5, text/markdown", true},
		{"text/markdown;q=0", false},
		{"text/markdown;q=0, */*", false},
		{"*/*, text/markdown;q=0", false},
		{"text/html;q=0, text/markdown;q=0.1", true},
		{"text/html;q=0, */*", true}, // markdown via */* at 1, HTML not acceptable
		{"text/html;q=0", false},     // markdown matched by nothing
		{"text/markdown;charset=utf-8", true},
		{`text/markdown;charset="UTF-8"`, true},
		{"text/markdown;charset=iso-8859-1", false},
		{"text/markdown;variant=GFM", false}, // a parameter we do not have
		{"text/markdown;charset=utf-8;q=0.1, text/markdown;q=0.9, text/html;q=0.5", false},
		{"text/markdown;q=0.3;level=1, text/html;q=0.2", true}, // after q: accept-ext
		{"text/plain, text/markdown", true},
		{"application/json", false},
		{"text/x-markdown", false},
		{"text/markdown;q=1.0", true},
		{"text/markdown;q=1.000", true},
		{"text/markdown;q=1.001", false}, // malformed
		{"text/markdown;q=2", false},
		{"text/markdown;q=0.1234", false},
		{"text/markdown;q=.5", false},
		{"text/markdown;q=", false},
		{"text/markdown;q", false},
		{"text/markdown;q=abc", false},
		{"textmarkdown", false},
		{"text/", false},
		{"/markdown", false},
		{"*/markdown", false},
		{"text/markdown,", true},
		{" , text/markdown ,, ", true},
		{"text/markdown ; q=0.9 , text/html ; q=0.8", true},
		{"text/mark down", false},
		{"text/markdown, bad", false},                    // one bad range: the header is malformed
		{"text/html;level=1, text/markdown;q=0.5", true}, // level=1 is not our HTML
		{"text/markdown;q=0.9, text/html;q=0.1, */*;q=1", true},
		{"text/markdown, text/html;q=0.9, text/*;q=1", true},
	}
	for _, tt := range tests {
		if got := Prefers(tt.accept); got != tt.want {
			t.Errorf("Prefers(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
}
