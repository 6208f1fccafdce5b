package proxy

import (
	"bufio"
	"errors"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// writeH1Request writes the head of r, a GET or HEAD without a body
// (h1Eligible), to bw: the bytes Request.Write writes for it, byte for
// byte (FuzzH1Request holds the two to that), without its formatted
// printing, transfer writer and header sorter, which cost a proxied
// request about 1.6 µs and 400 B (docs/performance.md). A request it does
// not describe, or one whose trace asks to hear of each header written,
// goes through Request.Write.
func writeH1Request(bw *bufio.Writer, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead || r.Close || r.URL == nil || r.Trailer != nil ||
		r.Body != nil && r.Body != http.NoBody || r.ContentLength != 0 || len(r.TransferEncoding) != 0 {
		return r.Write(bw)
	}
	if t := httptrace.ContextClientTrace(r.Context()); t != nil && (t.WroteHeaderField != nil || t.WroteHeaders != nil || t.WroteRequest != nil) {
		return r.Write(bw)
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	host, err := httpguts.PunycodeHostPort(host)
	if err != nil {
		return err
	}
	if !httpguts.ValidHostHeader(host) {
		// Request.Write sends an empty Host rather than one altered.
		host = ""
	}
	host = withoutZone(host)
	target := r.URL.RequestURI()
	if hasCTL(target) {
		return errors.New("net/http: can't write control character in Request.URL")
	}
	bw.WriteString(r.Method)
	bw.WriteByte(' ')
	bw.WriteString(target)
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(host)
	bw.WriteString("\r\n")
	ua := "Go-http-client/1.1" // Request.Write's default, unless the header has one
	if vs, ok := r.Header["User-Agent"]; ok {
		ua = ""
		if len(vs) > 0 {
			ua = vs[0]
		}
	}
	if ua != "" {
		writeField(bw, "User-Agent", ua)
	}
	// The fields in the order of their names, as Request.Write sorts them,
	// less those it writes itself or never.
	var arr [32]string
	keys := arr[:0]
	for k := range r.Header {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !httpguts.ValidHeaderFieldName(k) {
			continue // Request.Write drops it
		}
		for _, v := range r.Header[k] {
			writeField(bw, k, v)
		}
	}
	_, err = bw.WriteString("\r\n")
	return err
}

// writeField writes one header line as Request.Write does: a CR or LF in
// the value turned to a space, white space trimmed from its ends.
func writeField(bw *bufio.Writer, k, v string) {
	if strings.IndexByte(v, '\n') >= 0 || strings.IndexByte(v, '\r') >= 0 {
		v = newlineToSpace.Replace(v)
	}
	v = textproto.TrimString(v)
	bw.WriteString(k)
	bw.WriteString(": ")
	bw.WriteString(v)
	bw.WriteString("\r\n")
}

var newlineToSpace = strings.NewReplacer("\n", " ", "\r", " ")

// withoutZone removes an IPv6 zone from a bracketed host (RFC 6874: an
// intermediary removes it from an outgoing URI), as Request.Write does.
func withoutZone(host string) string {
	if !strings.HasPrefix(host, "[") {
		return host
	}
	end := strings.LastIndexByte(host, ']')
	if end < 0 {
		return host
	}
	zone := strings.LastIndexByte(host[:end], '%')
	if zone < 0 {
		return host
	}
	return host[:zone] + host[end:]
}

// hasCTL reports an ASCII control byte (or DEL) in s.
func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
