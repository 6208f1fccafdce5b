package proxy

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/headgate/headgate/internal/hgtest"
)

// SPEC §23: an upstream body that ends inside the head goes out as it came,
// counted as unchanged_truncated.
func TestTruncatedHeadThroughProxy(t *testing.T) {
	const body = "<!doctype html><head><title>Old</title><script>var x = 1;"
	p, front := newTestProxy(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		io.WriteString(w, body)
	}, cmsRules)
	if _, got := hgtest.Fetch(t, front.URL+"/2024/05/post/"); got != body {
		t.Errorf("body changed:\n got %q\nwant %q", got, body)
	}
	var counts map[string]float64
	for deadline := time.Now().Add(5 * time.Second); ; {
		if counts = outcomes(t, p); counts["unchanged_truncated"] == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if counts["unchanged_truncated"] != 1 {
		t.Errorf("outcomes %v, want unchanged_truncated=1", counts)
	}
}
