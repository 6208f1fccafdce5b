package audit

import (
	"bufio"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLocLength bounds one <loc>; the protocol allows 2,048 characters.
const maxLocLength = 4096

// parseSitemap streams a sitemap file, calling emit for each <loc> of a
// <urlset> (index false) or a <sitemapindex> (index true). A gzipped file
// is read through gzip. emit returns false to stop early.
func parseSitemap(r io.Reader, emit func(loc string, index bool) bool) error {
	br := bufio.NewReader(r)
	if b, err := br.Peek(2); err == nil && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		defer zr.Close()
		r = zr
	} else {
		r = br
	}
	d := xml.NewDecoder(r)
	var stack []string
	root := ""
	var loc strings.Builder
	inLoc := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if root == "" {
				return errors.New("no <urlset> or <sitemapindex>")
			}
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if len(stack) == 0 {
				if name != "urlset" && name != "sitemapindex" {
					return fmt.Errorf("root element <%s> is neither <urlset> nor <sitemapindex>", name)
				}
				root = name
			}
			if name == "loc" && len(stack) == 2 && (stack[1] == "url" || stack[1] == "sitemap") {
				inLoc = true
				loc.Reset()
			}
			stack = append(stack, name)
		case xml.CharData:
			if inLoc && loc.Len() < maxLocLength {
				loc.Write(t)
			}
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if inLoc && t.Name.Local == "loc" {
				inLoc = false
				if s := strings.TrimSpace(loc.String()); s != "" {
					if !emit(s, root == "sitemapindex") {
						return nil
					}
				}
			}
		}
	}
}
