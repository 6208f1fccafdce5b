package bots

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"
)

// Every parser of untrusted bytes has a fuzz target; corpora found are in
// testdata/fuzz.

func FuzzSignatureHeaders(f *testing.F) {
	f.Add(`sig1=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
		`sig1=:uz2SAv+VIemw+Oo890bhYh6Xf5qZdLUgv6/PbiQfCFXcX/vt1A8Pf7OcgL2yUDgT7Zx8pfTdT5fYw/4V9QLIDw==:`,
		`"https://signature-agent.test"`, "example.com")
	f.Add(`a=(), b=?1;x, c=("@method";req "x";key="y");p=-1.5`, `a=:/w==:, b=1`, `sig1="https://a.example"`, "h:80")
	f.Fuzz(func(t *testing.T, input, sig, agent, host string) {
		r := httptest.NewRequest("GET", "http://x/", nil)
		r.Host = host
		r.Header.Set("Signature-Input", input)
		r.Header.Set("Signature", sig)
		r.Header.Set("Signature-Agent", agent)
		r.Header.Set("X", input)
		now := time.Unix(1735690000, 0)
		s, err := parseSignature(r, now)
		if err == nil {
			signatureBase(r, s) // must not panic
		}
		// Round trip: what the parser reads, the serializer writes, and the
		// parser reads again the same way.
		if d, err := parseDictionary(input); err == nil {
			out := appendDictionary(nil, d)
			d2, err := parseDictionary(string(out))
			if err != nil {
				t.Fatalf("%q serialized as %q, which does not parse: %v", input, out, err)
			}
			if out2 := appendDictionary(nil, d2); !bytes.Equal(out, out2) {
				t.Fatalf("not stable: %q then %q", out, out2)
			}
		}
	})
}

func FuzzKeyDirectory(f *testing.F) {
	s := newTestSigner("", 1)
	f.Add([]byte(`{"keys":[` + s.jwk() + `]}`))
	f.Add([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"},{"kty":"RSA"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		keys, err := parseKeyDirectory(b)
		if err != nil {
			return
		}
		for tp, k := range keys {
			if len(k.pub) != 32 || len(tp) != 43 {
				t.Fatalf("key %q of %d bytes", tp, len(k.pub))
			}
		}
	})
}

func FuzzUserAgent(f *testing.F) {
	f.Add("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)")
	f.Add("TelegramBot (like TwitterBot)")
	f.Add("gptbot-GPTBOT/ChatGPT-User")
	cs := Directory()
	m := newUAMatcher(cs)
	f.Fuzz(func(t *testing.T, ua string) {
		if got, want := m.match(ua), naiveMatch(cs, ua); got != want {
			t.Fatalf("%q: matcher %d, oracle %d", ua, got, want)
		}
	})
}

func FuzzHeader(f *testing.F) {
	f.Add("gptbot", "ai-training", "ip")
	f.Add(`x", verified=ip`, "", "no")
	f.Add("agent.example:8443", "", "signature")
	f.Fuzz(func(t *testing.T, name, cat, ver string) {
		id := Identity{Name: name, Category: Category(cat), Verified: Verified(ver)}
		h := id.Header()
		d, err := parseDictionary(h)
		if err != nil {
			t.Fatalf("%+v wrote %q, not a dictionary: %v", id, h, err)
		}
		keys := []string{}
		for _, m := range d {
			keys = append(keys, m.key)
		}
		want := 1
		if cat != "" {
			want++
		}
		if ver != "" {
			want++
		}
		if len(d) != want || d[0].key != "name" {
			t.Fatalf("%+v wrote %q: members %v", id, h, keys)
		}
		printable := true
		for i := 0; i < len(name); i++ {
			if name[i] < 0x20 || name[i] > 0x7e {
				printable = false
			}
		}
		if got := d[0].item.bare.s; printable && name != "" && got != name {
			t.Fatalf("name %q read back as %q from %q", name, got, h)
		}
	})
}
