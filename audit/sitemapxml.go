package audit

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLocLength bounds one <loc>; the protocol allows 2,048 characters.
const maxLocLength = 4096

// Bounds on what a sitemap may make the audit hold: the protocol's 50 MB
// uncompressed (a gzip bomb is cut there), a text run between two tags
// (encoding/xml holds one whole) and the depth of elements.
const (
	maxSitemapUncompressed = 64 << 20
	maxSitemapTextRun      = 1 << 20
	maxSitemapDepth        = 32
)

// errTextRun stops a sitemap whose text between two tags is longer than
// any sitemap's.
var errTextRun = fmt.Errorf("more than %d bytes of text between two tags", maxSitemapTextRun)

// runLimit fails a read once maxSitemapTextRun bytes have come without a
// "<", so that encoding/xml never buffers a text token larger than that.
type runLimit struct {
	r   io.Reader
	run int
}

func (l *runLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if i := bytes.LastIndexByte(p[:n], '<'); i >= 0 {
		l.run = n - i - 1
	} else {
		l.run += n
	}
	if l.run > maxSitemapTextRun {
		return n, errTextRun
	}
	return n, err
}

// parseSitemap streams a sitemap file, calling emit for each <loc> of a
// <urlset> (index false) or a <sitemapindex> (index true), and returns the
// root element's name. A gzipped file is read through gzip. emit returns
// false to stop early.
func parseSitemap(r io.Reader, emit func(loc string, index bool) bool) (root string, err error) {
	br := bufio.NewReader(r)
	if b, err := br.Peek(2); err == nil && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", err
		}
		defer zr.Close()
		r = &limited{r: zr, n: maxSitemapUncompressed}
	} else {
		r = br
	}
	d := xml.NewDecoder(&runLimit{r: r})
	root, err = decodeSitemap(d, emit)
	return root, err
}

func decodeSitemap(d *xml.Decoder, emit func(loc string, index bool) bool) (string, error) {
	var stack []string
	root := ""
	var loc strings.Builder
	inLoc := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if root == "" {
				return "", errors.New("no <urlset> or <sitemapindex>")
			}
			return root, nil
		}
		if err != nil {
			return root, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			if len(stack) == 0 {
				if name != "urlset" && name != "sitemapindex" {
					return "", fmt.Errorf("root element <%s> is neither <urlset> nor <sitemapindex>", name)
				}
				root = name
			}
			if name == "loc" && len(stack) == 2 && (stack[1] == "url" || stack[1] == "sitemap") {
				inLoc = true
				loc.Reset()
			}
			if len(stack) >= maxSitemapDepth {
				return root, fmt.Errorf("elements nested more than %d deep", maxSitemapDepth)
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
						return root, nil
					}
				}
			}
		}
	}
}
