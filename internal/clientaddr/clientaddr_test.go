package clientaddr

import (
	"crypto/tls"
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

var trust = New([]netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("fd00::/8"),
})

func request(remote string, headers ...string) *http.Request {
	r := &http.Request{RemoteAddr: remote, Header: http.Header{}}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		r.Header.Add(k, v)
	}
	return r
}

func TestClient(t *testing.T) {
	for _, c := range []struct {
		name          string
		remote        string
		headers       []string
		want          string // "" for the invalid Addr
		wantForwarded bool
	}{
		{"untrusted peer", "192.0.2.9:1234", nil, "192.0.2.9", false},
		{"untrusted peer, spoofed XFF", "192.0.2.9:1234", []string{"X-Forwarded-For: 203.0.113.5"}, "192.0.2.9", false},
		{"trusted, no XFF", "10.9.8.7:1234", nil, "10.9.8.7", false},
		{"trusted", "10.9.8.7:1234", []string{"X-Forwarded-For: 203.0.113.5"}, "203.0.113.5", true},
		{"trusted chain", "10.9.8.7:1234", []string{"X-Forwarded-For: 203.0.113.5, 10.1.1.1"}, "203.0.113.5", true},
		{"spoofed left of the client", "10.9.8.7:1234", []string{"X-Forwarded-For: 1.2.3.4, 203.0.113.5, 10.1.1.1"}, "203.0.113.5", true},
		{"all trusted: the leftmost", "10.9.8.7:1234", []string{"X-Forwarded-For: 10.1.1.1, 10.2.2.2"}, "10.1.1.1", true},
		{"many headers, the last is rightmost", "10.9.8.7:1234", []string{"X-Forwarded-For: 1.2.3.4", "X-Forwarded-For: 203.0.113.5, 10.1.1.1"}, "203.0.113.5", true},
		{"many headers, walk into the first", "10.9.8.7:1234", []string{"X-Forwarded-For: 1.2.3.4", "X-Forwarded-For: 10.1.1.1"}, "1.2.3.4", true},
		{"garbage ends the walk", "10.9.8.7:1234", []string{"X-Forwarded-For: 1.2.3.4, garbage, 10.1.1.1"}, "10.1.1.1", true},
		{"garbage only", "10.9.8.7:1234", []string{"X-Forwarded-For: garbage"}, "10.9.8.7", false},
		{"empty entry ends the walk", "10.9.8.7:1234", []string{"X-Forwarded-For: 1.2.3.4,,10.1.1.1"}, "10.1.1.1", true},
		{"trailing comma", "10.9.8.7:1234", []string{"X-Forwarded-For: 203.0.113.5,"}, "10.9.8.7", false},
		{"empty header", "10.9.8.7:1234", []string{"X-Forwarded-For: "}, "10.9.8.7", false},
		{"address and port", "10.9.8.7:1234", []string{"X-Forwarded-For: 203.0.113.5:4711"}, "203.0.113.5", true},
		{"IPv6", "[fd00::1]:1234", []string{"X-Forwarded-For: 2001:db8::5"}, "2001:db8::5", true},
		{"IPv6 with port", "[fd00::1]:1234", []string{"X-Forwarded-For: [2001:db8::5]:80, fd00::2"}, "2001:db8::5", true},
		{"IPv6 peer untrusted", "[2001:db8::9]:1234", []string{"X-Forwarded-For: 2001:db8::5"}, "2001:db8::9", false},
		{"IPv4-mapped trusted peer", "[::ffff:10.1.2.3]:1234", []string{"X-Forwarded-For: ::ffff:203.0.113.5"}, "203.0.113.5", true},
		{"zone: kept, and never a trusted proxy", "10.9.8.7:1234", []string{"X-Forwarded-For: fe80::1%eth0, fd00::1%eth0"}, "fd00::1%eth0", true},
		{"zoned peer is not trusted", "[fd00::1%eth0]:1234", []string{"X-Forwarded-For: 203.0.113.5"}, "fd00::1%eth0", false},
		{"peer not an address", "pipe", []string{"X-Forwarded-For: 203.0.113.5"}, "", false},
		{"peer without port", "10.9.8.7", []string{"X-Forwarded-For: 203.0.113.5"}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, fwd := trust.Client(request(c.remote, c.headers...))
			got := ""
			if a.IsValid() {
				got = a.String()
			}
			if got != c.want || fwd != c.wantForwarded {
				t.Errorf("Client = %q, forwarded %v; want %q, %v", got, fwd, c.want, c.wantForwarded)
			}
		})
	}
}

func TestZeroTrust(t *testing.T) {
	var none Trust
	a, fwd := none.Client(request("10.9.8.7:1", "X-Forwarded-For: 203.0.113.5"))
	if a.String() != "10.9.8.7" || fwd {
		t.Errorf("the zero Trust believed X-Forwarded-For: %v %v", a, fwd)
	}
	if none.HTTPS(request("10.9.8.7:1", "X-Forwarded-Proto: https")) {
		t.Error("the zero Trust believed X-Forwarded-Proto")
	}
}

func TestHTTPS(t *testing.T) {
	for _, c := range []struct {
		name    string
		remote  string
		tls     bool
		headers []string
		want    bool
	}{
		{"plain, untrusted", "192.0.2.1:1", false, nil, false},
		{"TLS, untrusted", "192.0.2.1:1", true, nil, true},
		{"untrusted says https", "192.0.2.1:1", false, []string{"X-Forwarded-Proto: https"}, false},
		{"untrusted says http over TLS", "192.0.2.1:1", true, []string{"X-Forwarded-Proto: http"}, true},
		{"trusted says https", "10.0.0.1:1", false, []string{"X-Forwarded-Proto: https"}, true},
		{"trusted says HTTPS", "10.0.0.1:1", false, []string{"X-Forwarded-Proto: HTTPS"}, true},
		{"trusted says http over TLS", "10.0.0.1:1", true, []string{"X-Forwarded-Proto: http"}, false},
		{"trusted, first of a list", "10.0.0.1:1", false, []string{"X-Forwarded-Proto: https, http"}, true},
		{"trusted, first header", "10.0.0.1:1", false, []string{"X-Forwarded-Proto: http", "X-Forwarded-Proto: https"}, false},
		{"trusted, Forwarded", "10.0.0.1:1", false, []string{"Forwarded: for=203.0.113.5;proto=https"}, true},
		{"trusted, Forwarded quoted", "10.0.0.1:1", false, []string{`Forwarded: for="[2001:db8::1]"; Proto="https", proto=http`}, true},
		{"trusted, X-Forwarded-Proto before Forwarded", "10.0.0.1:1", false, []string{"Forwarded: proto=https", "X-Forwarded-Proto: http"}, false},
		{"trusted, says nothing", "10.0.0.1:1", false, nil, false},
		{"trusted, garbage", "10.0.0.1:1", false, []string{"X-Forwarded-Proto: gopher"}, false},
		{"IPv6 trusted", "[fd00::1]:1", false, []string{"X-Forwarded-Proto: https"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := request(c.remote, c.headers...)
			if c.tls {
				r.TLS = &tls.ConnectionState{}
			}
			if got := trust.HTTPS(r); got != c.want {
				t.Errorf("HTTPS = %v, want %v", got, c.want)
			}
		})
	}
}

// The common paths allocate nothing.
func TestClientAllocs(t *testing.T) {
	for _, r := range []*http.Request{
		request("192.0.2.9:1234"),
		request("10.9.8.7:1234", "X-Forwarded-For: 203.0.113.5, 10.1.1.1", "X-Forwarded-Proto: https"),
		request("[fd00::1]:1234", "X-Forwarded-For: 2001:db8::5", "Forwarded: proto=HTTPS"),
	} {
		if n := testing.AllocsPerRun(100, func() {
			trust.Client(r)
			trust.HTTPS(r)
		}); n != 0 {
			t.Errorf("%s %v: %v allocations, want 0", r.RemoteAddr, r.Header, n)
		}
	}
}

func BenchmarkClient(b *testing.B) {
	for _, c := range []struct {
		name string
		r    *http.Request
	}{
		{"peer", request("192.0.2.9:1234")},
		{"trusted", request("10.9.8.7:1234", "X-Forwarded-For: 203.0.113.5, 10.1.1.1", "X-Forwarded-Proto: https")},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				trust.Client(c.r)
				trust.HTTPS(c.r)
			}
		})
	}
}

// Whatever the headers say, the client is the peer or an address a
// trusted peer's X-Forwarded-For names, and it is not a trusted proxy
// unless every address right of it is one too.
func FuzzClient(f *testing.F) {
	f.Add("10.9.8.7:1234", "203.0.113.5, 10.1.1.1", "https")
	f.Add("192.0.2.9:1", "203.0.113.5", "http")
	f.Add("[fd00::1]:1", "[2001:db8::5]:80, fe80::1%eth0", "")
	f.Add("10.0.0.1:1", ",,garbage,", "for=x;proto=https")
	f.Fuzz(func(t *testing.T, remote, xff, proto string) {
		r := request(remote)
		r.Header["X-Forwarded-For"] = []string{xff}
		r.Header["Forwarded"] = []string{proto}
		a, fwd := trust.Client(r)
		peer, peerOK := Peer(remote)
		switch {
		case !fwd && a != peer:
			t.Fatalf("not forwarded, but %v is not the peer %v", a, peer)
		case fwd && !(peerOK && trust.Trusts(peer)):
			t.Fatalf("forwarded from an untrusted peer %q", remote)
		case fwd && !a.IsValid():
			t.Fatal("forwarded an invalid address")
		}
		trust.HTTPS(r)
		if p := ForwardedProto(r.Header); p != strings.ToLower(p) {
			t.Fatalf("proto %q not lower-case", p)
		}
	})
}
