package rules

import (
	"os/exec"
	"strings"
	"testing"
)

// The packages under rules/ are below it (doc.go, "Layout"): each imports
// nothing of headgate's but internal/*, so that none can reach back into
// the engine and a reader can take each in alone.
func TestSubpackagesStandAlone(t *testing.T) {
	const mod = "github.com/headgate/headgate/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if f[0] == mod+"rules" {
			continue
		}
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, mod) && !strings.HasPrefix(imp, mod+"internal/") {
				t.Errorf("%s imports %s", strings.TrimPrefix(f[0], mod), strings.TrimPrefix(imp, mod))
			}
		}
	}
}
