package botconfig

import "strings"

// MaxTokenLen is the longest user-agent token a directory entry may have.
const MaxTokenLen = 64

// ValidToken reports whether t is a user-agent product token a directory
// entry may name: 3 to MaxTokenLen of A-Z a-z 0-9 _ -. The UA matcher
// (package bots) matches only such tokens.
func ValidToken(t string) bool {
	if len(t) < 3 || len(t) > MaxTokenLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func validToken(t string) bool { return ValidToken(t) }

// isTChar is RFC 9110's tchar: what a header name is made of.
func isTChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
