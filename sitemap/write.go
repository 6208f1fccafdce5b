package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// errDisabled is returned by WriteTo and WriteFiles without sitemap rules.
var errDisabled = errors.New("no rule has sitemap = true: there is no sitemap to write")

// WriteFiles generates the sitemap once, bypassing the cache, and writes
// it into dir: sitemap.xml and, when it is an index, sitemap-1.xml …
// sitemap-N.xml. Each file is written to a temporary name and renamed, so
// a server reading dir never sees half a file. Files of an earlier, larger
// run (sitemap-N+1.xml …) are left alone. Left-out entries are logged; an
// unreadable source is an error.
func (s *Sitemap) WriteFiles(ctx context.Context, dir string) error {
	if !s.enabled {
		return errDisabled
	}
	res, err := s.generate(ctx)
	if err != nil {
		return err
	}
	if err := writeFile(dir, "sitemap.xml", res.main); err != nil {
		return err
	}
	for i, p := range res.parts {
		if err := writeFile(dir, "sitemap-"+strconv.Itoa(i+1)+".xml", p); err != nil {
			return err
		}
	}
	return res.emptyErr()
}

func writeFile(dir, name string, f *file) (err error) {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	zr, err := f.open()
	if err != nil {
		return err
	}
	if _, err = io.Copy(tmp, zr); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// WriteTo generates the sitemap once, bypassing the cache, and writes
// /sitemap.xml to w: the <urlset>, or the <sitemapindex> when the URLs
// need more than one file (whose parts only WriteFiles writes).
func (s *Sitemap) WriteTo(ctx context.Context, w io.Writer) error {
	if !s.enabled {
		return errDisabled
	}
	res, err := s.generate(ctx)
	if err != nil {
		return err
	}
	if len(res.parts) > 0 {
		s.log.Warn("sitemap: the sitemap needs an index; its parts are written only to a directory (-o DIR)",
			"files", len(res.parts))
	}
	zr, err := res.main.open()
	if err != nil {
		return err
	}
	defer zr.Close()
	if _, err = io.Copy(w, zr); err != nil {
		return err
	}
	return res.emptyErr()
}

// emptyErr is an *EmptyError naming the rules whose source yielded lines
// but no entry, or nil.
func (r *result) emptyErr() error {
	if len(r.empty) == 0 {
		return nil
	}
	return &EmptyError{Rules: r.empty}
}
