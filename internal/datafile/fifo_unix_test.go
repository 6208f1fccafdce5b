//go:build unix

package datafile

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFIFORefused: a FIFO named as a table is refused, not waited on (a
// read of one blocks until a writer comes).
func TestFIFORefused(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.csv")
	if err := unix.Mkfifo(p, 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	if _, err := Open(p, Options{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v", err)
	}
}
