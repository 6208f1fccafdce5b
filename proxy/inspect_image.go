package proxy

import (
	"net"
	"net/url"
	"strings"
)

// The link card's image is the one thing on an inspector page that the
// operator's browser fetches, and the upstream names it: a hostile
// upstream's og:image of http://127.0.0.1:9090/debug/pprof/profile?seconds=30
// or of an intranet URL would make the browser, inside the operator's
// network, send that request. So the card loads an image only from
// base_url's origin or a host the operator listed (inspector.image_hosts,
// inspector.image_hosts); any other is shown as its URL and a link, and the
// page's Content-Security-Policy img-src names the same origins, so that a
// slip in the template cannot load more.

// imagePolicy is where the link card may load an image from.
type imagePolicy struct {
	scheme, host, port string // base_url's origin: host lower case, port explicit
	hosts              []imageHost
}

// imageHost is one entry of inspector.image_hosts: a name, or name:port for
// a port other than the scheme's default.
type imageHost struct{ name, port string }

// newImagePolicy builds the policy from base_url and the listed hosts;
// entries that are not a host or host:port are ignored (the loader
// refuses them).
func newImagePolicy(baseURL string, hosts []string) *imagePolicy {
	ip := &imagePolicy{}
	if u, err := url.Parse(baseURL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		ip.scheme, ip.host, ip.port = u.Scheme, strings.ToLower(u.Hostname()), portOf(u)
	}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimSpace(h))
		name, port := h, ""
		if n, p, err := net.SplitHostPort(h); err == nil {
			name, port = n, p
		}
		name = strings.TrimSuffix(name, ".")
		if name == "" || strings.ContainsAny(name, "/?#@*[] \\%") {
			continue
		}
		ip.hosts = append(ip.hosts, imageHost{name, port})
	}
	return ip
}

// portOf is u's port, the scheme's default when it names none.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// allows reports whether the card may load raw, an absolute http(s) URL.
func (ip *imagePolicy) allows(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return false
	}
	name, port := strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), portOf(u)
	if ip.scheme != "" && u.Scheme == ip.scheme && name == ip.host && port == ip.port {
		return true
	}
	for _, h := range ip.hosts {
		if name != h.name {
			continue
		}
		// No port listed: the scheme's own, as a CSP host-source reads it.
		if h.port == "" && u.Port() == "" || h.port == port {
			return true
		}
	}
	return false
}

// imgSrc is the CSP img-src value that matches allows: base_url's origin
// and each listed host over http and https ('none' when there is none).
func (ip *imagePolicy) imgSrc() string {
	var b strings.Builder
	if ip.scheme != "" {
		b.WriteString(ip.scheme + "://" + hostPort(ip.host, ip.port, ip.scheme))
	}
	for _, h := range ip.hosts {
		for _, sc := range []string{"http", "https"} {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(sc + "://" + hostPort(h.name, h.port, ""))
		}
	}
	if b.Len() == 0 {
		return "'none'"
	}
	return b.String()
}

// hostPort writes host[:port], leaving out scheme's default port.
func hostPort(host, port, scheme string) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == "" || scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		return host
	}
	return host + ":" + port
}

// apply decides whether c's image is loaded, and says why not.
func (ip *imagePolicy) apply(c *cardPreview) {
	if c == nil || c.Image == "" {
		return
	}
	u, err := url.Parse(c.Image)
	c.ImageHTTP = err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
	c.ImageOK = c.ImageHTTP && ip.allows(c.Image)
	switch {
	case !c.ImageHTTP:
		c.ImageNote = "not an absolute http(s) URL: not loaded"
	case !c.ImageOK:
		c.ImageNote = "not on base_url's origin nor in inspector.image_hosts: not loaded here"
	}
}
