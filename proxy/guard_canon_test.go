package proxy

import (
	"net/textproto"
	"testing"
)

// The header names deleted from a header map directly (without Del's
// canonicalization) are in canonical form: any other spelling would never
// match a key and silently delete nothing.
func TestCanonicalHeaderKeys(t *testing.T) {
	var keys []string
	keys = append(keys, droppedRequestHeaders[:]...)
	keys = append(keys, upstreamBytesHeaders[:]...)
	for _, k := range keys {
		if c := textproto.CanonicalMIMEHeaderKey(k); c != k {
			t.Errorf("%q is deleted as it is, but its canonical form is %q", k, c)
		}
	}
}
