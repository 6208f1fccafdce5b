package test

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"
)

// runChromium runs Debian's headless Chromium once with args (a mode such
// as --dump-dom or --screenshot=FILE, then the URL) and returns what it
// printed; it skips the test when Chromium is not installed. Every host but
// 127.0.0.1 resolves to nothing, so no page under test reaches the network,
// and the flags keep Chromium's own background traffic off (this machine's
// network is closed).
func runChromium(t *testing.T, args ...string) []byte {
	t.Helper()
	bin := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir=" + t.TempDir(),
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, tail(stderr.String(), 3000))
	}
	return out
}
