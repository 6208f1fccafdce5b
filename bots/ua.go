package bots

import (
	"strings"

	"github.com/headgate/headgate/bots/botconfig"
)

// maxUAScan bounds the bytes of a User-Agent that are read for tokens.
const maxUAScan = 1024

// maxTokenLen bounds a token, so that a word is lower-cased on the stack.
const maxTokenLen = botconfig.MaxTokenLen

// uaMatcher finds the first directory token in a User-Agent. A token is a
// whole word: a run of A-Z a-z 0-9 _ - bounded by anything else, so
// "Googlebot/2.1" names googlebot and "Googlebot-Image/1.0" names the
// entry holding "Googlebot-Image", while "NotGooglebot" names nothing. The
// first word that is a token wins ("TelegramBot (like TwitterBot)" is
// telegrambot).
type uaMatcher struct {
	tokens map[string]int // lower-case token → crawler index
	// A word is looked up only when a token has its length, first and
	// last byte: most words of a browser's user agent stop here.
	lens        uint64 // bit n-1: a token of n bytes
	first, last *[256]bool
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func validToken(t string) bool { return botconfig.ValidToken(t) }

func newUAMatcher(cs []Crawler) uaMatcher {
	m := uaMatcher{tokens: make(map[string]int), first: new([256]bool), last: new([256]bool)}
	for i, c := range cs {
		for _, t := range c.Tokens {
			if !validToken(t) {
				continue // Check reports it
			}
			k := strings.ToLower(t)
			if _, dup := m.tokens[k]; !dup {
				m.tokens[k] = i
				m.lens |= 1 << (len(k) - 1)
				m.first[k[0]] = true
				m.last[k[len(k)-1]] = true
			}
		}
	}
	return m
}

// match returns the index of the crawler the user agent names, or -1. It
// does not allocate.
func (m uaMatcher) match(ua string) int {
	if len(ua) > maxUAScan {
		ua = ua[:maxUAScan]
	}
	var buf [maxTokenLen]byte
	for i := 0; i < len(ua); {
		if !isWordByte(ua[i]) {
			i++
			continue
		}
		j := i
		for j < len(ua) && isWordByte(ua[j]) {
			j++
		}
		if n := j - i; n <= maxTokenLen && n >= 3 && m.lens&(1<<(n-1)) != 0 &&
			m.first[lower(ua[i])] && m.last[lower(ua[j-1])] {
			w := buf[:n]
			for k := 0; k < n; k++ {
				c := ua[i+k]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				w[k] = c
			}
			if idx, ok := m.tokens[string(w)]; ok {
				return idx
			}
		}
		i = j
	}
	return -1
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
