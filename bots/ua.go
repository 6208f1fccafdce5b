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
	// A word is looked up only when some token has its length, first and
	// last byte together (a bit of filter, by filterBit): every word of a
	// browser's user agent stops here, bar one in 50 or so.
	filter *[filterBits / 64]uint64
}

// filterBits is the size of uaMatcher.filter: with the directory's 80-odd
// tokens, about 2 % of its bits are set.
const filterBits = 4096

// filterBit is a word's bit in uaMatcher.filter, of its length n and its
// first and last bytes lower-cased.
func filterBit(n int, first, last byte) uint32 {
	return (uint32(n)*0x9E3779B1 ^ uint32(first)*0x85EBCA77 ^ uint32(last)*0xC2B2AE3D) >> (32 - 12)
}

// wordBytes are the bytes of a word: A-Z a-z 0-9 _ -.
var wordBytes = func() (t [256]bool) {
	for c := range 256 {
		b := byte(c)
		t[c] = b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-'
	}
	return t
}()

func isWordByte(c byte) bool { return wordBytes[c] }

func validToken(t string) bool { return botconfig.ValidToken(t) }

func newUAMatcher(cs []Crawler) uaMatcher {
	m := uaMatcher{tokens: make(map[string]int), filter: new([filterBits / 64]uint64)}
	for i, c := range cs {
		for _, t := range c.Tokens {
			if !validToken(t) {
				continue // Check reports it
			}
			k := strings.ToLower(t)
			if _, dup := m.tokens[k]; !dup {
				m.tokens[k] = i
				b := filterBit(len(k), k[0], k[len(k)-1])
				m.filter[b/64] |= 1 << (b % 64)
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
		if n := j - i; n <= maxTokenLen && n >= 3 && m.has(filterBit(n, lower(ua[i]), lower(ua[j-1]))) {
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

func (m *uaMatcher) has(b uint32) bool { return m.filter[b/64]&(1<<(b%64)) != 0 }

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
