package bots

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Web Bot Auth (SPEC §18.2): RFC 9421 HTTP message signatures with the
// profile of draft-meunier-web-bot-auth-architecture and the key directory
// of draft-meunier-http-message-signatures-directory.

const (
	wbaTag = "web-bot-auth"
	// DirectoryPath is where an agent publishes its keys.
	DirectoryPath = "/.well-known/http-message-signatures-directory"
	// DirectoryMediaType is the key directory's media type.
	DirectoryMediaType = "application/http-message-signatures-directory+json"

	maxDirectoryBytes = 64 << 10         // a key directory larger than this is refused
	maxDirectoryKeys  = 64               // keys read from one directory
	minDirectoryTTL   = 5 * time.Minute  // Cache-Control max-age is clamped to
	maxDirectoryTTL   = 24 * time.Hour   // [min, max]
	defDirectoryTTL   = time.Hour        // when no max-age is given
	failDirectoryTTL  = time.Minute      // a failed fetch is retried after this
	keyChangeRefetch  = time.Minute      // an unknown keyid refetches a directory at most this often
	maxDirectories    = 1024             // origins remembered
	maxNonces         = 100_000          // nonces remembered for replay
	maxSignatureLife  = 24 * time.Hour   // expires - created
	clockSkew         = 60 * time.Second // created may be this far in the future
	directoryTimeout  = 5 * time.Second
)

// SignatureError says why a signature did not verify. The proxy logs it.
type SignatureError struct {
	Agent  string // the Signature-Agent origin, "" when none parsed
	Reason string
}

func (e *SignatureError) Error() string {
	if e.Agent == "" {
		return "web bot auth: " + e.Reason
	}
	return "web bot auth (" + e.Agent + "): " + e.Reason
}

func sigErr(agent, format string, args ...any) error {
	return &SignatureError{Agent: agent, Reason: fmt.Sprintf(format, args...)}
}

// errNoSignature means the request carries no Web Bot Auth signature.
var errNoSignature = errors.New("no signature")

// signedRequest is a parsed, not yet verified, Web Bot Auth signature.
type signedRequest struct {
	label   string
	params  sfMember // the inner list of Signature-Input
	sig     []byte
	agent   string // origin, normalized
	keyid   string
	nonce   string
	created time.Time
	expires time.Time
}

// parseSignature finds the web-bot-auth signature of r and checks what
// needs no key: tag, algorithm, times, covered components.
func parseSignature(r *http.Request, now time.Time) (*signedRequest, error) {
	inputs := r.Header.Values("Signature-Input")
	sigs := r.Header.Values("Signature")
	if len(inputs) == 0 && len(sigs) == 0 {
		return nil, errNoSignature
	}
	agentRaw := strings.Join(r.Header.Values("Signature-Agent"), ", ")
	in, err := parseDictionary(strings.Join(inputs, ", "))
	if err != nil {
		return nil, sigErr("", "Signature-Input does not parse")
	}
	sd, err := parseDictionary(strings.Join(sigs, ", "))
	if err != nil {
		return nil, sigErr("", "Signature does not parse")
	}
	var s signedRequest
	found := false
	for _, m := range in {
		if !m.isInner {
			continue
		}
		if tag, ok := m.param("tag"); ok && tag.kind == sfString && tag.s == wbaTag {
			s.label, s.params, found = m.key, m, true
			break
		}
	}
	if !found {
		return nil, sigErr("", `no signature with tag="web-bot-auth"`)
	}
	for _, m := range sd {
		if m.key == s.label && !m.isInner && m.item.bare.kind == sfBytes {
			s.sig = m.item.bare.b
		}
	}
	if s.sig == nil {
		return nil, sigErr("", "no Signature member %q", s.label)
	}
	if agentRaw != "" {
		s.agent, err = parseSignatureAgent(agentRaw, s.label)
		if err != nil {
			return nil, sigErr("", "Signature-Agent: %v", err)
		}
	}
	if a, ok := s.params.param("alg"); ok && !(a.kind == sfString && a.s == "ed25519") {
		return nil, sigErr(s.agent, "alg is not ed25519")
	}
	k, ok := s.params.param("keyid")
	if !ok || k.kind != sfString || k.s == "" {
		return nil, sigErr(s.agent, "no keyid")
	}
	s.keyid = k.s
	if n, ok := s.params.param("nonce"); ok {
		if n.kind != sfString || len(n.s) > 512 {
			return nil, sigErr(s.agent, "bad nonce")
		}
		s.nonce = n.s
	}
	c, ok := s.params.param("created")
	if !ok || c.kind != sfInteger {
		return nil, sigErr(s.agent, "no created")
	}
	e, ok := s.params.param("expires")
	if !ok || e.kind != sfInteger {
		return nil, sigErr(s.agent, "no expires")
	}
	s.created, s.expires = time.Unix(c.i, 0), time.Unix(e.i, 0)
	switch {
	case s.created.After(now.Add(clockSkew)):
		return nil, sigErr(s.agent, "created is in the future")
	case !now.Before(s.expires):
		return nil, sigErr(s.agent, "expired")
	case s.expires.Sub(s.created) > maxSignatureLife || s.expires.Before(s.created):
		return nil, sigErr(s.agent, "lifetime longer than %s", maxSignatureLife)
	}
	var authority, agentCovered bool
	for _, it := range s.params.inner {
		if it.bare.kind != sfString {
			return nil, sigErr(s.agent, "a covered component is not a string")
		}
		switch it.bare.s {
		case "@authority":
			authority = true
		case "signature-agent":
			agentCovered = true
		}
	}
	if !authority {
		return nil, sigErr(s.agent, "@authority is not covered")
	}
	if agentRaw != "" && !agentCovered {
		return nil, sigErr(s.agent, "signature-agent is not covered")
	}
	if s.agent == "" {
		return nil, sigErr("", "no Signature-Agent: the key directory is unknown")
	}
	return &s, nil
}

// parseSignatureAgent reads Signature-Agent in either form the drafts have
// used: an sf-string ("https://agent.example") or a dictionary keyed by
// signature label (sig1="https://agent.example").
func parseSignatureAgent(v, label string) (string, error) {
	if it, err := parseItem(v); err == nil {
		if it.bare.kind != sfString {
			return "", errors.New("not a string")
		}
		return agentOrigin(it.bare.s)
	}
	d, err := parseDictionary(v)
	if err != nil {
		return "", errors.New("does not parse")
	}
	for _, m := range d {
		if m.key == label && !m.isInner && m.item.bare.kind == sfString {
			return agentOrigin(m.item.bare.s)
		}
	}
	return "", errors.New("no member for " + label)
}

// signatureBase builds the RFC 9421 §2.5 signature base.
func signatureBase(r *http.Request, s *signedRequest) ([]byte, error) {
	var b []byte
	seen := make(map[string]bool, len(s.params.inner))
	for _, it := range s.params.inner {
		name := it.bare.s
		if seen[name] {
			return nil, errors.New("a component is covered twice")
		}
		seen[name] = true
		b = appendSFItem(b, it)
		b = append(b, ':', ' ')
		var val string
		if strings.HasPrefix(name, "@") {
			if len(it.params) > 0 {
				return nil, fmt.Errorf("parameters on %s", name)
			}
			var err error
			if val, err = derivedComponent(r, name); err != nil {
				return nil, err
			}
		} else {
			if name != strings.ToLower(name) {
				return nil, errors.New("an upper-case component name")
			}
			vs := r.Header.Values(name)
			if len(vs) == 0 {
				return nil, fmt.Errorf("covered header %s is missing", name)
			}
			for i := range vs {
				vs[i] = strings.Trim(vs[i], " \t")
			}
			val = strings.Join(vs, ", ")
			for _, p := range it.params {
				switch p.key {
				case "sf":
					if _, err := parseItem(val); err == nil {
						break
					}
					d, err := parseDictionary(val)
					if err != nil {
						return nil, fmt.Errorf("%s;sf does not parse", name)
					}
					val = string(appendDictionary(nil, d))
				case "key":
					if p.val.kind != sfString {
						return nil, errors.New("key parameter is not a string")
					}
					d, err := parseDictionary(val)
					if err != nil {
						return nil, fmt.Errorf("%s;key does not parse", name)
					}
					var out []byte
					for _, m := range d {
						if m.key == p.val.s {
							out = appendSFMember(nil, m)
						}
					}
					if out == nil {
						return nil, fmt.Errorf("%s has no member %s", name, p.val.s)
					}
					val = string(out)
				default:
					return nil, fmt.Errorf("unsupported parameter %s on %s", p.key, name)
				}
			}
		}
		if strings.ContainsAny(val, "\r\n") {
			return nil, errors.New("a component value holds a line break")
		}
		b = append(b, val...)
		b = append(b, '\n')
	}
	b = append(b, `"@signature-params": `...)
	b = appendSFMember(b, s.params)
	return b, nil
}

func appendDictionary(b []byte, d []sfMember) []byte {
	for i, m := range d {
		if i > 0 {
			b = append(b, ',', ' ')
		}
		b = append(b, m.key...)
		if !m.isInner && m.item.bare.kind == sfBool && m.item.bare.i == 1 {
			b = appendSFParams(b, m.item.params)
			continue
		}
		b = append(b, '=')
		b = appendSFMember(b, m)
	}
	return b
}

// derivedComponent is RFC 9421 §2.2 for the components a request has.
func derivedComponent(r *http.Request, name string) (string, error) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	switch name {
	case "@method":
		return r.Method, nil
	case "@authority":
		return requestAuthority(r), nil
	case "@scheme":
		return scheme, nil
	case "@target-uri":
		return scheme + "://" + requestAuthority(r) + r.URL.RequestURI(), nil
	case "@request-target":
		return r.URL.RequestURI(), nil
	case "@path":
		p := r.URL.EscapedPath()
		if p == "" {
			p = "/"
		}
		return p, nil
	case "@query":
		return "?" + r.URL.RawQuery, nil
	}
	return "", fmt.Errorf("unsupported component %s", name)
}

// requestAuthority is the Host, lower-cased, without the scheme's default
// port (RFC 9421 §2.2.3).
func requestAuthority(r *http.Request) string {
	h := strings.ToLower(r.Host)
	if r.TLS != nil {
		h = strings.TrimSuffix(h, ":443")
	} else {
		h = strings.TrimSuffix(h, ":80")
	}
	return h
}

// thumbprint is the RFC 7638 JWK thumbprint of an Ed25519 key (RFC 8037):
// base64url(SHA-256 of {"crv":"Ed25519","kty":"OKP","x":"…"}).
func thumbprint(x string) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

type jwk struct {
	Kty string  `json:"kty"`
	Crv string  `json:"crv"`
	X   string  `json:"x"`
	Nbf float64 `json:"nbf"` // not before (Unix seconds), 0 = none
	Exp float64 `json:"exp"` // expires (Unix seconds), 0 = none
}

// dirKey is a key of a directory with the validity the directory gives it
// (OpenAI's directory sets nbf and exp on its keys).
type dirKey struct {
	pub      ed25519.PublicKey
	nbf, exp int64
}

// validAt reports whether the key may be used at t.
func (k dirKey) validAt(t time.Time) bool {
	u := t.Unix()
	return (k.nbf == 0 || u >= k.nbf) && (k.exp == 0 || u < k.exp)
}

// parseKeyDirectory reads a key directory ({"keys": [JWK, …]}) into a map
// from thumbprint to key. Keys that are not Ed25519 are skipped.
func parseKeyDirectory(data []byte) (map[string]dirKey, error) {
	var d struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("not a key directory: %w", err)
	}
	keys := make(map[string]dirKey)
	for i, raw := range d.Keys {
		if i >= maxDirectoryKeys {
			break
		}
		var k jwk
		if json.Unmarshal(raw, &k) != nil || k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			continue
		}
		keys[thumbprint(k.X)] = dirKey{pub: ed25519.PublicKey(x), nbf: clampUnix(k.Nbf), exp: clampUnix(k.Exp)}
	}
	if len(keys) == 0 {
		return nil, errors.New("no Ed25519 key")
	}
	return keys, nil
}

type dirEntry struct {
	keys    map[string]dirKey
	err     error
	fetched time.Time
	expires time.Time
	done    chan struct{} // open while a fetch runs
}

// keyDirectories fetches and caches agents' key directories.
type keyDirectories struct {
	client   *http.Client
	insecure map[string]bool // origins allowed over http
	now      func() time.Time
	stats    *Stats

	mu       sync.Mutex
	entries  map[string]*dirEntry
	inflight int
}

// maxDirectoryFetches bounds key directory fetches in flight: a client
// that names a new agent origin in every request costs at most this.
const maxDirectoryFetches = 32

// key returns the agent's key for keyid, waiting at most wait for a fetch.
func (k *keyDirectories) key(ctx context.Context, origin, keyid string, wait time.Duration) (ed25519.PublicKey, error) {
	if strings.HasPrefix(origin, "http://") && !k.insecure[origin] {
		return nil, errors.New("key directory is not https")
	}
	now := k.now()
	k.mu.Lock()
	e := k.entries[origin]
	if e != nil && e.done == nil {
		if now.Before(e.expires) {
			if key, ok := e.keys[keyid]; ok {
				k.mu.Unlock()
				return key.checked(now)
			}
			// An unknown keyid: the agent may have rotated its keys.
			if e.err != nil || now.Sub(e.fetched) < keyChangeRefetch {
				err := e.err
				k.mu.Unlock()
				if err != nil {
					return nil, err
				}
				return nil, errors.New("unknown keyid")
			}
		}
		e = nil
	}
	if e == nil {
		if len(k.entries) >= maxDirectories {
			for o, old := range k.entries { // evict any finished entry
				if old.done == nil {
					delete(k.entries, o)
					break
				}
			}
		}
		if k.inflight >= maxDirectoryFetches {
			k.mu.Unlock()
			return nil, errors.New("too many key directory fetches in flight")
		}
		k.inflight++
		e = &dirEntry{done: make(chan struct{})}
		k.entries[origin] = e
		go k.fetch(origin, e)
	}
	done := e.done
	k.mu.Unlock()
	if done != nil {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			return nil, errors.New("key directory did not answer within dns_wait")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if e.err != nil {
		return nil, e.err
	}
	if key, ok := e.keys[keyid]; ok {
		return key.checked(now)
	}
	return nil, errors.New("unknown keyid")
}

func (k dirKey) checked(now time.Time) (ed25519.PublicKey, error) {
	if !k.validAt(now) {
		return nil, errors.New("the key is outside its nbf/exp")
	}
	return k.pub, nil
}

func clampUnix(f float64) int64 {
	switch {
	case f != f || f <= 0: // NaN, absent, negative
		return 0
	case f > 1<<40:
		return 1 << 40
	}
	return int64(f)
}

func (k *keyDirectories) fetch(origin string, e *dirEntry) {
	keys, ttl, err := k.get(origin)
	now := k.now()
	if err != nil {
		k.stats.DirectoryFetchFailed.Add(1)
		ttl = failDirectoryTTL
	}
	k.mu.Lock()
	e.keys, e.err, e.fetched, e.expires = keys, err, now, now.Add(ttl)
	k.inflight--
	close(e.done)
	e.done = nil
	k.mu.Unlock()
}

func (k *keyDirectories) get(origin string) (map[string]dirKey, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), directoryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, origin+DirectoryPath, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", DirectoryMediaType+", application/json;q=0.5")
	res, err := k.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("key directory: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("key directory: status %d", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != DirectoryMediaType && mt != "application/json" && mt != "application/jwk-set+json" {
			return nil, 0, fmt.Errorf("key directory: media type %q", mt)
		}
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, maxDirectoryBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("key directory: %w", err)
	}
	if len(data) > maxDirectoryBytes {
		return nil, 0, fmt.Errorf("key directory: larger than %d bytes", maxDirectoryBytes)
	}
	keys, err := parseKeyDirectory(data)
	if err != nil {
		return nil, 0, err
	}
	return keys, cacheTTL(res.Header.Get("Cache-Control")), nil
}

// cacheTTL reads max-age from Cache-Control, clamped to the bounds.
func cacheTTL(cc string) time.Duration {
	ttl := defDirectoryTTL
	for _, d := range strings.Split(cc, ",") {
		d = strings.TrimSpace(strings.ToLower(d))
		if v, ok := strings.CutPrefix(d, "max-age="); ok {
			if n, err := strconv.Atoi(strings.Trim(v, `"`)); err == nil && n >= 0 {
				ttl = time.Duration(min(n, 1<<30)) * time.Second
			}
		}
		if d == "no-store" || d == "no-cache" {
			ttl = 0
		}
	}
	return min(max(ttl, minDirectoryTTL), maxDirectoryTTL)
}

// nonces remembers the nonces of verified signatures until they expire.
type nonces struct {
	mu        sync.Mutex
	seen      map[string]time.Time
	lastPrune time.Time
}

// use records nonce until exp; false when it was seen and has not expired,
// or when memory is full of unexpired nonces (fail closed: unverified).
func (n *nonces) use(nonce string, exp, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t, ok := n.seen[nonce]; ok && now.Before(t) {
		return false
	}
	if len(n.seen) >= maxNonces {
		// A full scan at most once a second: a flood of valid signatures
		// with fresh nonces must not make every request pay for it.
		if now.Sub(n.lastPrune) < time.Second && !now.Before(n.lastPrune) {
			return false
		}
		n.lastPrune = now
		for k, t := range n.seen {
			if !now.Before(t) {
				delete(n.seen, k)
			}
		}
		if len(n.seen) >= maxNonces {
			return false
		}
	}
	n.seen[nonce] = exp
	return true
}

// verifySignature checks r's Web Bot Auth signature and returns the
// agent's origin. errNoSignature when there is none.
func (v *Verifier) verifySignature(ctx context.Context, r *http.Request) (string, error) {
	now := v.now()
	s, err := parseSignature(r, now)
	if err != nil {
		var se *SignatureError
		if errors.As(err, &se) {
			return se.Agent, err
		}
		return "", err
	}
	base, err := signatureBase(r, s)
	if err != nil {
		return s.agent, sigErr(s.agent, "%v", err)
	}
	key, err := v.dirs.key(ctx, s.agent, s.keyid, v.cfg.DNSWait.Duration)
	if err != nil {
		return s.agent, sigErr(s.agent, "%v", err)
	}
	if !ed25519.Verify(key, base, s.sig) {
		return s.agent, sigErr(s.agent, "signature does not verify")
	}
	if s.nonce != "" && !v.nonces.use(s.label+"\x00"+s.agent+"\x00"+s.nonce, s.expires, now) {
		v.stats.SignatureReplayed.Add(1)
		return s.agent, sigErr(s.agent, "nonce replayed")
	}
	return s.agent, nil
}
