package rules

import (
	"strconv"
	"strings"
)

// keyLines maps every key path of a TOML document to the line where the key
// stands. BurntSushi/toml keeps key positions private, and headgate must
// name the line of every problem, so this reads the document once more,
// only for its keys. It never fails: a document it can not follow is one
// toml.Decode already rejected with its own position.
//
// Paths are spelled as Problem.Key spells them: "server.listen",
// "rule[2].open_graph.image", "rule[0].sitemap_entries[1].params.id".
func keyLines(src string) map[string]int {
	s := &keyScanner{src: src, line: 1, lines: map[string]int{}, arrays: map[string]int{}}
	s.document()
	return s.lines
}

type keyScanner struct {
	src    string
	i      int
	line   int
	lines  map[string]int
	arrays map[string]int // array-of-tables path → current index
}

func (s *keyScanner) peek() byte {
	if s.i < len(s.src) {
		return s.src[s.i]
	}
	return 0
}

func (s *keyScanner) advance() {
	if s.i < len(s.src) {
		if s.src[s.i] == '\n' {
			s.line++
		}
		s.i++
	}
}

// space skips blanks, and with nl also newlines and comments.
func (s *keyScanner) space(nl bool) {
	for s.i < len(s.src) {
		switch c := s.src[s.i]; {
		case c == ' ' || c == '\t' || c == '\r':
			s.i++
		case nl && c == '\n':
			s.advance()
		case nl && c == '#':
			for s.i < len(s.src) && s.src[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

func (s *keyScanner) record(path string, line int) {
	if _, ok := s.lines[path]; !ok {
		s.lines[path] = line
	}
}

func (s *keyScanner) document() {
	ctx := ""
	for guard := 0; s.i < len(s.src) && guard < len(s.src)+1; guard++ {
		s.space(true)
		if s.i >= len(s.src) {
			return
		}
		start := s.i
		if s.peek() == '[' {
			ctx = s.header()
		} else {
			line := s.line
			parts := s.key()
			if len(parts) == 0 || s.peek() != '=' {
				s.skipLine()
				continue
			}
			s.advance()
			path := join(ctx, parts)
			s.record(path, line)
			s.value(path)
		}
		if s.i == start {
			s.advance()
		}
	}
}

func (s *keyScanner) skipLine() {
	for s.i < len(s.src) && s.src[s.i] != '\n' {
		s.i++
	}
}

// header reads "[a.b]" or "[[a.b]]" and returns the context path it opens.
func (s *keyScanner) header() string {
	line := s.line
	s.advance()
	array := s.peek() == '['
	if array {
		s.advance()
	}
	parts := s.key()
	for s.i < len(s.src) && s.src[s.i] != '\n' && s.src[s.i] != ']' {
		s.i++
	}
	s.skipLine()
	// Every component that is an array of tables refers to its last element.
	path := ""
	for i, p := range parts {
		if path != "" {
			path += "."
		}
		path += p
		if n, ok := s.arrays[path]; ok && !(array && i == len(parts)-1) {
			path += "[" + strconv.Itoa(n) + "]"
		}
	}
	if array {
		n := 0
		if c, ok := s.arrays[path]; ok {
			n = c + 1
		}
		s.arrays[path] = n
		s.record(path, line)
		path += "[" + strconv.Itoa(n) + "]"
	}
	s.record(path, line)
	return path
}

// key reads a dotted key and leaves the scanner after its trailing blanks.
func (s *keyScanner) key() []string {
	var parts []string
	for {
		s.space(false)
		switch c := s.peek(); {
		case c == '"' || c == '\'':
			parts = append(parts, s.quoted())
		case isBareKeyByte(c):
			j := s.i
			for s.i < len(s.src) && isBareKeyByte(s.src[s.i]) {
				s.i++
			}
			parts = append(parts, s.src[j:s.i])
		default:
			return parts
		}
		s.space(false)
		if s.peek() != '.' {
			return parts
		}
		s.advance()
	}
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// quoted reads a one-line quoted key or string and returns its content
// (escapes in basic strings are decoded only as far as keys need).
func (s *keyScanner) quoted() string {
	q := s.peek()
	s.advance()
	var b strings.Builder
	for s.i < len(s.src) && s.src[s.i] != '\n' {
		c := s.src[s.i]
		s.i++
		if c == q {
			return b.String()
		}
		if c == '\\' && q == '"' && s.i < len(s.src) {
			b.WriteByte(s.src[s.i])
			s.i++
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// value skips one value, recording the keys of inline tables it holds.
func (s *keyScanner) value(path string) {
	s.space(false)
	switch c := s.peek(); c {
	case '{':
		s.advance()
		for s.i < len(s.src) {
			s.space(true)
			if s.peek() == '}' {
				s.advance()
				return
			}
			line := s.line
			parts := s.key()
			if len(parts) == 0 || s.peek() != '=' {
				s.skipTo("}")
				s.advance()
				return
			}
			s.advance()
			p := join(path, parts)
			s.record(p, line)
			s.value(p)
			s.space(true)
			if s.peek() == ',' {
				s.advance()
			}
		}
	case '[':
		s.advance()
		for n := 0; s.i < len(s.src); n++ {
			s.space(true)
			if s.peek() == ']' {
				s.advance()
				return
			}
			start := s.i
			p := path + "[" + strconv.Itoa(n) + "]"
			s.record(p, s.line)
			s.value(p)
			s.space(true)
			if s.peek() == ',' {
				s.advance()
			}
			if s.i == start {
				s.advance()
			}
		}
	case '"', '\'':
		if strings.HasPrefix(s.src[s.i:], string([]byte{c, c, c})) {
			s.i += 3
			end := strings.Index(s.src[s.i:], string([]byte{c, c, c}))
			if end < 0 {
				end = len(s.src) - s.i
			}
			for k := 0; k < end+3 && s.i < len(s.src); k++ {
				s.advance()
			}
			// A closing delimiter may be followed by up to two more quotes.
			for s.peek() == c {
				s.advance()
			}
			return
		}
		s.quoted()
	default:
		for s.i < len(s.src) {
			switch s.src[s.i] {
			case ',', ']', '}', '\n', '#':
				return
			}
			s.i++
		}
	}
}

func (s *keyScanner) skipTo(set string) {
	for s.i < len(s.src) && !strings.ContainsRune(set, rune(s.src[s.i])) {
		s.advance()
	}
}

func join(ctx string, parts []string) string {
	p := strings.Join(parts, ".")
	if ctx == "" {
		return p
	}
	return ctx + "." + p
}

// lineOf finds the line of path or, failing that, of its nearest parent.
func lineOf(lines map[string]int, path string) int {
	for path != "" {
		if l, ok := lines[path]; ok {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}
