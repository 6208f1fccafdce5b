package proxy

import (
	"encoding/base64"
	"strings"
)

// A rewritten response's ETag is weak and carries the upstream's ETag and
// the config hash: W/"hg.<cfghash>.<base64url(upstream ETag)>". headgate
// keeps no state: a client's If-None-Match is mapped back to the upstream
// ETag it encodes, so the upstream can still answer 304; a tag made under
// another config names a representation headgate no longer serves and is
// dropped, so the upstream answers 200.
const etagPrefix = `W/"hg.`

// maxETag bounds an upstream ETag headgate wraps (and unwraps): a longer
// one is left as it is.
const maxETag = 512

// wrapETag returns the ETag of the rewritten representation of the
// upstream's, or "" when the upstream's is not a valid entity tag.
func wrapETag(upstream, cfgHash string) string {
	if !validETag(upstream) {
		return ""
	}
	return etagPrefix + cfgHash + "." + base64.RawURLEncoding.EncodeToString([]byte(upstream)) + `"`
}

// unwrapETag recovers the upstream ETag from one of headgate's. ours is
// false for a tag headgate did not make; current is false for one made
// under another config.
func unwrapETag(tag, cfgHash string) (upstream string, ours, current bool) {
	if !strings.HasPrefix(tag, etagPrefix) || !strings.HasSuffix(tag, `"`) || len(tag) > 2*maxETag {
		return "", false, false
	}
	h, enc, ok := strings.Cut(tag[len(etagPrefix):len(tag)-1], ".")
	if !ok {
		return "", false, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || !validETag(string(raw)) {
		return "", false, false
	}
	return string(raw), true, h == cfgHash
}

// validETag reports whether s is an entity-tag (RFC 9110 §8.8.3):
// [W/] DQUOTE *etagc DQUOTE, etagc being %x21 / %x23-7E / obs-text.
func validETag(s string) bool {
	if len(s) > maxETag {
		return false
	}
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		if c < 0x21 || c == '"' || c == 0x7f {
			return false
		}
	}
	return true
}

// splitETags splits an If-None-Match or If-Match list. Commas inside a
// quoted tag do not split.
func splitETags(v string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				if t := strings.TrimSpace(v[start:i]); t != "" {
					out = append(out, t)
				}
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(v[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

// mapConditional rewrites an If-None-Match or If-Match value for the
// upstream: headgate's current tags become the upstream tags they encode,
// its stale ones are dropped, others pass. mapped reports whether any of
// headgate's tags was present; empty is true when nothing is left.
func mapConditional(v, cfgHash string) (out string, mapped, empty bool) {
	if !strings.Contains(v, etagPrefix) {
		return v, false, false
	}
	tags := splitETags(v)
	kept := tags[:0]
	for _, t := range tags {
		up, ours, current := unwrapETag(t, cfgHash)
		switch {
		case !ours:
			kept = append(kept, t)
		case current:
			mapped = true
			kept = append(kept, up)
		default:
			mapped = true
		}
	}
	return strings.Join(kept, ", "), mapped, len(kept) == 0
}
