package sitemap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	xmlType      = "application/xml; charset=utf-8"
	textType     = "text/plain; charset=utf-8"
	cacheControl = "public, max-age=300"

	// maxRobots bounds the upstream robots.txt read in append mode (Google
	// reads the first 500 KiB).
	maxRobots = 512 << 10
)

// ServeHTTP answers /sitemap.xml, /sitemap-N.xml and /robots.txt (the
// paths Handles accepts; anything else is a 404). Only GET and HEAD are
// allowed. Answers never set a cookie.
func (s *Sitemap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Del("Set-Cookie")
	path := r.URL.Path
	if !s.serves(path) {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if path == "/robots.txt" {
		s.serveRobots(w, r)
		return
	}
	if s.isKeyPath(path) {
		s.serveKey(w, r)
		return
	}
	res, retry, err := s.get(r.Context())
	if err != nil {
		return // the client has gone
	}
	if res == nil {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(max(retry, time.Second).Seconds()))))
		h.Set("Cache-Control", "no-store")
		http.Error(w, "503 the sitemap is not available yet", http.StatusServiceUnavailable)
		return
	}
	if path == "/llms.txt" && res.llms != nil {
		s.serveLLMS(w, r, res.llms)
		return
	}
	f := res.lookup(path)
	if f == nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	s.serveFile(w, r, f)
}

// cacheHeaders writes the headers every generated file shares: its type,
// caching, Vary and the ETag of the coding the client gets (gzip when it
// accepts it). done: the request's If-None-Match matched, and a 304 went
// out.
func cacheHeaders(w http.ResponseWriter, r *http.Request, ctype, etag string) (gz, done bool) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", cacheControl)
	h.Add("Vary", "Accept-Encoding")
	gz = acceptsGzip(r.Header.Values("Accept-Encoding"))
	if gz {
		etag = etag[:len(etag)-1] + `-gzip"`
	}
	h.Set("ETag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return gz, true
	}
	return gz, false
}

func (s *Sitemap) serveFile(w http.ResponseWriter, r *http.Request, f *file) {
	gz, done := cacheHeaders(w, r, xmlType, f.etag)
	if done {
		return
	}
	h := w.Header()
	if gz {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.FormatInt(f.gz.n, 10))
	} else {
		h.Set("Content-Length", strconv.FormatInt(f.size, 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if gz {
		for _, b := range f.gz.bufs {
			if _, err := w.Write(b); err != nil {
				return
			}
		}
		return
	}
	zr, err := f.open()
	if err == nil {
		_, err = io.Copy(w, zr)
		zr.Close()
	}
	if err != nil && r.Context().Err() == nil {
		s.log.Error("sitemap: decompressing a cached file failed", "path", r.URL.Path, "error", err)
	}
}

// acceptsGzip reads Accept-Encoding: gzip (or x-gzip, or *) with a q-value
// above 0.
func acceptsGzip(values []string) bool {
	star, gzip := -1.0, -1.0
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					} else {
						q = 0
					}
				}
			}
			switch strings.ToLower(strings.TrimSpace(coding)) {
			case "gzip", "x-gzip":
				gzip = max(gzip, q)
			case "*":
				star = max(star, q)
			}
		}
	}
	if gzip >= 0 {
		return gzip > 0
	}
	return star > 0
}

// etagMatch implements If-None-Match's weak comparison.
func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// serveRobots answers /robots.txt in the mode New chose.
func (s *Sitemap) serveRobots(w http.ResponseWriter, r *http.Request) {
	var body []byte
	switch s.robots {
	case robotsStaging:
		body = []byte("User-agent: *\nDisallow: /\n")
	case robotsGenerate:
		body = s.generatedRobots()
	case robotsAppend:
		up, err := s.upstreamRobots(r.Context())
		if err != nil {
			if r.Context().Err() != nil {
				return
			}
			// RFC 9309 §2.3.1.4: an unreachable robots.txt means "disallow
			// everything" to a crawler, until it reads one again. Serving
			// only the Sitemap line would turn it into "allow everything".
			s.log.Error("sitemap: upstream robots.txt unreachable; answering 503", "error", err)
			h := w.Header()
			h.Set("Retry-After", strconv.Itoa(int(math.Ceil(s.retryAfter.Seconds()))))
			h.Set("Cache-Control", "no-store")
			http.Error(w, "503 robots.txt is not available", http.StatusServiceUnavailable)
			return
		}
		body = s.appendedRobots(up)
	}
	h := w.Header()
	h.Set("Content-Type", textType)
	h.Set("Cache-Control", cacheControl)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// upstreamRobots reads the upstream's robots.txt, at most maxRobots bytes
// (cut after the last whole line). An absent one (a 4xx answer) and one
// that is HTML (a site that answers every path with its app) are empty.
func (s *Sitemap) upstreamRobots(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	rc, err := s.fetch(ctx, "/robots.txt")
	if err != nil {
		var st interface{ HTTPStatus() int }
		// A 4xx is no robots.txt (RFC 9309 §2.3.1.3), but for 429, which
		// Google reads as a server error: its crawl would stop, not open.
		if errors.As(err, &st) && st.HTTPStatus() >= 400 && st.HTTPStatus() < 500 && st.HTTPStatus() != http.StatusTooManyRequests {
			return nil, nil
		}
		if errors.As(err, &st) && st.HTTPStatus() >= 300 && st.HTTPStatus() < 400 {
			// A redirect Fetch did not follow to an end (another host, or
			// more than five): Google then reads no robots.txt, as for a
			// 404, rather than stopping its crawl.
			s.log.Warn("sitemap: upstream robots.txt redirects where headgate does not follow; serving headgate's part only", "status", st.HTTPStatus())
			return nil, nil
		}
		return nil, err
	}
	if rc == nil {
		return nil, errors.New("fetch returned no body")
	}
	cr := newCtxReader(ctx, rc)
	defer cr.Close()
	b, err := io.ReadAll(io.LimitReader(cr, maxRobots+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRobots {
		b = b[:maxRobots]
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[:i+1]
		}
		s.log.Warn("sitemap: upstream robots.txt is larger than 512 KiB; serving its first 512 KiB")
	}
	if t := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF")), " \t\r\n"); len(t) > 0 && t[0] == '<' {
		s.log.Warn("sitemap: upstream robots.txt is HTML, not robots.txt; serving only the Sitemap line")
		return nil, nil
	}
	return b, nil
}
