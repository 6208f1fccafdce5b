package sitemap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// xsdDir finds the shared XSD directory: ../shared/xsd from the module
// root.
func xsdDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "xsd")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// validate checks generated files against the sitemaps.org schemas with
// xmllint: a <urlset> against xhtml-link.xsd (which imports sitemap.xsd
// and declares xhtml:link, so that the strict wildcard accepts the links),
// a <sitemapindex> against siteindex.xsd. Without xmllint or the schemas,
// the test is skipped.
func validate(t *testing.T, files map[string]string) {
	t.Helper()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint is not on PATH (apt-get install libxml2-utils): schema validation skipped")
	}
	xsd := xsdDir(t)
	for _, f := range []string{"sitemap.xsd", "siteindex.xsd", "xhtml-link.xsd"} {
		if _, err := os.Stat(filepath.Join(xsd, f)); err != nil {
			t.Skipf("no %s in %s: schema validation skipped", f, xsd)
		}
	}
	dir := t.TempDir()
	for name, doc := range files {
		path := filepath.Join(dir, strings.TrimPrefix(name, "/"))
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		schema := "xhtml-link.xsd"
		if strings.Contains(doc, "<sitemapindex") {
			schema = "siteindex.xsd"
		}
		out, err := exec.Command(xmllint, "--noout", "--nonet", "--schema", filepath.Join(xsd, schema), path).CombinedOutput()
		if err != nil {
			t.Errorf("%s does not validate against %s: %v\n%s", name, schema, err, out)
		}
	}
}

func TestSchemaValid(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		files        map[string]string
	}{
		{"plain", plainConfig, map[string]string{"notes.jsonl": plainNotes}},
		{"localized", localizedConfig, nil},
		{"index", indexConfig, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			validate(t, generated(t, New(loadConfig(t, tc.config, tc.files), Options{})))
		})
	}
}

// The validator itself: a file that breaks the schema fails.
func TestSchemaCatchesErrors(t *testing.T) {
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("xmllint is not on PATH")
	}
	files := generated(t, New(loadConfig(t, localizedConfig, nil), Options{}))
	doc := files["/sitemap.xml"]
	for name, broken := range map[string]string{
		"undeclared prefix": strings.Replace(doc, ` xmlns:xhtml="http://www.w3.org/1999/xhtml"`, "", 1),
		"bad lastmod":       strings.Replace(doc, "<lastmod>2026-01-10</lastmod>", "<lastmod>2026-13-10</lastmod>", 1),
		"long loc":          strings.Replace(doc, "<loc>https://notes.example/contact</loc>", "<loc>https://notes.example/"+strings.Repeat("a", 2100)+"</loc>", 1),
	} {
		t.Run(name, func(t *testing.T) {
			if ok := validates(t, broken); ok {
				t.Errorf("xmllint accepts a file with a %s", name)
			}
		})
	}
}

func validates(t *testing.T, doc string) bool {
	t.Helper()
	xsd := xsdDir(t)
	if _, err := os.Stat(filepath.Join(xsd, "xhtml-link.xsd")); err != nil {
		t.Skipf("no xhtml-link.xsd in %s (../shared/xsd beside the repository): the validator is not checked", xsd)
	}
	path := filepath.Join(t.TempDir(), "s.xml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return exec.Command("xmllint", "--noout", "--nonet", "--schema", filepath.Join(xsd, "xhtml-link.xsd"), path).Run() == nil
}
