package proxy

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"testing"
)

// sameAsRequestWrite checks that writeH1Request writes what Request.Write
// writes for r (or fails as it does).
func sameAsRequestWrite(t *testing.T, r *http.Request) {
	t.Helper()
	var want, got bytes.Buffer
	wbw, gbw := bufio.NewWriter(&want), bufio.NewWriter(&got)
	werr := r.Write(wbw)
	wbw.Flush()
	gerr := writeH1Request(gbw, r)
	gbw.Flush()
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("Request.Write: %v; writeH1Request: %v", werr, gerr)
	}
	if werr == nil && !bytes.Equal(want.Bytes(), got.Bytes()) {
		t.Fatalf("Request.Write wrote\n%q\nwriteH1Request\n%q", want.Bytes(), got.Bytes())
	}
}

func TestWriteH1Request(t *testing.T) {
	var heard int
	traced := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{WroteHeaderField: func(string, []string) { heard++ }})
	for _, tc := range []struct {
		name   string
		method string
		url    string
		host   string
		header http.Header
		ctx    context.Context
	}{
		{"a proxied GET", "GET", "http://127.0.0.1:8080/a/b?x=1&y=%20", "", http.Header{
			"User-Agent": {""}, "Accept": {"text/html"}, "Accept-Encoding": {"identity"},
			"X-Forwarded-For": {"192.0.2.1"}, "Cookie": {"a=1", "b=2"}, "Headgate-Bot": {`name="googlebot"`},
		}, nil},
		{"HEAD with the default user agent", "HEAD", "http://up/", "", http.Header{"Accept": {"*/*"}}, nil},
		{"a user agent of its own, padded", "GET", "http://up/p", "", http.Header{"User-Agent": {"  curl/8 "}}, nil},
		{"no user agent values", "GET", "http://up/p", "", http.Header{"User-Agent": {}}, nil},
		{"newlines in values", "GET", "http://up/p", "", http.Header{"X-A": {"a\r\nb", "\nc\r"}, "X-B": {"\t x \t"}}, nil},
		{"fields it writes itself or never", "GET", "http://up/p", "", http.Header{
			"Host": {"evil"}, "Content-Length": {"5"}, "Transfer-Encoding": {"chunked"}, "Trailer": {"X"}, "host": {"lower"},
		}, nil},
		{"invalid field names", "GET", "http://up/p", "", http.Header{"Bad Name": {"1"}, "Bad:": {"2"}, "": {"3"}, "Ok": {"4"}}, nil},
		{"Host from the request", "GET", "http://up/p", "public.example", nil, nil},
		{"a Unicode host", "GET", "http://up/p", "bücher.example:8080", nil, nil},
		{"an invalid host", "GET", "http://up/p", "a b\r\nX: y", nil, nil},
		{"an IPv6 zone", "GET", "http://[fe80::1%25eth0]:80/p", "", nil, nil},
		{"a control byte in the target", "GET", "http://up/p", "", nil, nil},
		{"an opaque URL", "GET", "http://up/p", "", nil, nil},
		{"a traced request", "GET", "http://up/p", "", http.Header{"A": {"1"}}, traced},
		{"trailers named", "GET", "http://up/p", "", http.Header{"A": {"1"}}, nil},
		{"40 fields", "GET", "http://up/p", "", func() http.Header {
			h := http.Header{}
			for i := range 40 {
				h.Set("X-F"+strings.Repeat("z", 40-i), "v")
			}
			return h
		}(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			r, err := http.NewRequestWithContext(ctx, tc.method, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.Header = tc.header
			r.Host = tc.host
			switch tc.name {
			case "a control byte in the target":
				r.URL.Path = "/a\x01b"
			case "an opaque URL":
				r.URL = &url.URL{Scheme: "http", Host: "up", Opaque: "//up/o%20p"}
			case "trailers named":
				r.Trailer = http.Header{"X-T": nil}
			}
			sameAsRequestWrite(t, r)
			if tc.ctx == traced {
				// A trace that hears each header field hears them.
				heard = 0
				writeH1Request(bufio.NewWriter(io.Discard), r)
				if heard == 0 {
					t.Error("the trace heard no header field")
				}
			}
		})
	}
}

// FuzzH1Request holds writeH1Request to Request.Write's bytes for any GET
// or HEAD without a body: its target, Host and header fields.
func FuzzH1Request(f *testing.F) {
	f.Add(true, "/a?b=c", "example.com", "User-Agent", " x ", "Accept", "text/html")
	f.Add(false, "/", "", "X-A", "a\nb", "Cookie", "c=1")
	f.Add(true, "/p", "[fe80::1%eth0]", "user-agent", "lower", "Host", "h")
	f.Fuzz(func(t *testing.T, head bool, target, host, k1, v1, k2, v2 string) {
		method := "GET"
		if head {
			method = "HEAD"
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		u.Scheme, u.Host = "http", "up"
		r := &http.Request{Method: method, URL: u, Host: host, Header: http.Header{k1: {v1}}, ProtoMajor: 1, ProtoMinor: 1}
		r.Header[k2] = append(r.Header[k2], v2)
		sameAsRequestWrite(t, r)
	})
}

// BenchmarkH1Request is the head of a proxied GET written both ways.
//
//	go test ./proxy -run '^$' -bench H1Request
func BenchmarkH1Request(b *testing.B) {
	r, _ := http.NewRequest("GET", "http://127.0.0.1:18001/page?x=1", nil)
	r.Header = http.Header{
		"User-Agent": {"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"}, "Accept": {"text/html,application/xhtml+xml"},
		"Accept-Encoding": {"identity"}, "Accept-Language": {"en"}, "Cookie": {"session=abc"},
		"X-Forwarded-For": {"192.0.2.1"}, "X-Forwarded-Host": {"bench.example"}, "X-Forwarded-Proto": {"https"},
	}
	bw := bufio.NewWriter(nil)
	for _, bc := range []struct {
		name  string
		write func(*bufio.Writer, *http.Request) error
	}{
		{"Request.Write", func(bw *bufio.Writer, r *http.Request) error { return r.Write(bw) }},
		{"writeH1Request", writeH1Request},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bw.Reset(discard{})
				if err := bc.write(bw, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
