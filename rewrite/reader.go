package rewrite

import "io"

// Reader rewrites the head of the HTML document read from its source.
// (Temporary pass-through; the streaming implementation replaces it.)
type Reader struct {
	src  io.Reader
	opts Options
	res  Result
}

// NewReader returns a Reader that rewrites src as opts say.
func NewReader(src io.Reader, opts Options) *Reader {
	return &Reader{src: src, opts: opts, res: Result{Outcome: Unchanged}}
}

// Prepare reads the source through the end of the region headgate edits
// and decides the output, so that Result (and its Delta) is known before
// the first byte goes out. Read calls it when needed. Its error is the
// source's read error, never a rewrite problem: those fail open.
func (r *Reader) Prepare() error { return nil }

// Read reads the rewritten document.
func (r *Reader) Read(p []byte) (int, error) { return r.src.Read(p) }

// Result reports what the rewrite did; complete after Prepare.
func (r *Reader) Result() *Result { return &r.res }
