package proxy

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/headgate/headgate/rules"
)

// ServeOptions configures Serve. The zero value works.
type ServeOptions struct {
	Options
	// Reload asks for a config reload (cmd/headgate sends on SIGHUP); nil:
	// reload only on file changes.
	Reload <-chan struct{}
	// PollInterval is how often the config file is checked for changes;
	// 0 means 1s, negative turns polling off.
	PollInterval time.Duration
	// Stderr receives the problem report of a config that does not load;
	// nil means os.Stderr.
	Stderr io.Writer
	// Started, if set, is called once both listeners accept connections.
	Started func(public, admin net.Addr)
}

// Server timeouts. No write or body-read timeout: responses stream, and
// uploads take as long as they take.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
)

// Serve loads the config at path and runs headgate: the public listener
// (server.listen) and the admin listener (server.admin_listen); for
// upstream "builtin:demo", o.Demo gives the demo site's address. It reloads the
// config on o.Reload and when the file changes (its resolved path, mtime,
// size and content, polled: this also sees a Kubernetes ConfigMap's
// symlink swap); a config that fails to load is refused and the old one
// keeps serving. When ctx ends it shuts down gracefully within
// server.shutdown_timeout and returns nil.
//
// A config that does not load at start is reported to o.Stderr and
// returned (a rules.Problems for a bad config).
func Serve(ctx context.Context, path string, o ServeOptions) error {
	stderr := o.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		o.Logger = log
	}
	w := &watcher{path: path}
	w.changed() // the fingerprint of what is about to load
	cfg, err := rules.Load(path)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return err
	}
	w.watch(cfg.Files)
	p, err := New(cfg, o.Options)
	if err != nil {
		return err
	}
	defer p.Close() // after the servers' Shutdown, deferred below

	pubL, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("server.listen: %w", err)
	}
	admL, err := net.Listen("tcp", cfg.Server.AdminListen)
	if err != nil {
		pubL.Close()
		return fmt.Errorf("server.admin_listen: %w", err)
	}
	errLog := slog.NewLogLogger(log.Handler(), slog.LevelDebug)
	pub := &http.Server{
		Handler:           p,
		ConnState:         p.connState,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errLog,
	}
	adm := &http.Server{
		Handler:           p.Admin(),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errLog,
	}
	serveErr := make(chan error, 2)
	go func() { serveErr <- pub.Serve(pubL) }()
	go func() { serveErr <- adm.Serve(admL) }()
	log.Info("headgate serving", "listen", pubL.Addr().String(), "admin", admL.Addr().String(),
		"inspect", inspectURL(admL.Addr()), "upstream", cfg.Server.Upstream,
		"upstream_addr", p.Upstream().String(),
		"config", path, "hash", cfg.Hash, "mode", cfg.Site.Mode)
	if o.Started != nil {
		o.Started(pubL.Addr(), admL.Addr())
	}

	var tick <-chan time.Time
	if o.PollInterval >= 0 {
		iv := o.PollInterval
		if iv == 0 {
			iv = time.Second
		}
		t := time.NewTicker(iv)
		defer t.Stop()
		tick = t.C
	}
	reload := func(trigger string) {
		w.changed() // what is loaded now is the new baseline
		w.pending = false
		p.Reload(trigger)
		w.watch(p.Config().Files)
	}
	for {
		select {
		case <-ctx.Done():
			timeout := p.Config().Server.ShutdownTimeout
			log.Info("shutting down", "timeout", timeout)
			sctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			var wg sync.WaitGroup
			for _, s := range []*http.Server{pub, adm} {
				wg.Go(func() {
					if err := s.Shutdown(sctx); err != nil {
						log.Warn("shutdown timeout: closing the remaining connections", "err", err)
						s.Close()
					}
				})
			}
			wg.Wait()
			return nil
		case <-o.Reload:
			reload("signal")
		case <-tick:
			if w.settled() {
				p.Reload("file")
				w.watch(p.Config().Files)
			}
		case err := <-serveErr:
			pub.Close()
			adm.Close()
			return fmt.Errorf("serving: %w", err)
		}
	}
}

// Reload loads the config again from the file the current one came from
// and swaps it in; a config that does not load is refused and the current
// one keeps serving. trigger names the cause in the log.
func (p *Proxy) Reload(trigger string) {
	old := p.Config()
	cfg, err := rules.Load(old.File)
	if err != nil {
		var ps rules.Problems
		if errors.As(err, &ps) {
			lines := make([]string, len(ps))
			for i, pr := range ps {
				lines[i] = pr.String()
			}
			p.m.reloads.WithLabelValues("refused").Inc()
			p.log.Error("config refused: the previous config keeps serving", "trigger", trigger,
				"config", old.File, "problems", lines)
			return
		}
		p.m.reloads.WithLabelValues("error").Inc()
		p.log.Error("config reload failed: the previous config keeps serving", "trigger", trigger, "err", err)
		return
	}
	if cfg.Server.Listen != old.Server.Listen || cfg.Server.AdminListen != old.Server.AdminListen {
		p.log.Warn("a changed listen address takes effect on restart only",
			"listen", old.Server.Listen, "admin_listen", old.Server.AdminListen)
	}
	if err := p.Swap(cfg); err != nil {
		p.m.reloads.WithLabelValues("error").Inc()
		p.log.Error("config reload failed: the previous config keeps serving", "trigger", trigger, "err", err)
		return
	}
	p.m.reloads.WithLabelValues("ok").Inc()
	p.log.Info("config reloaded", "trigger", trigger, "hash", cfg.Hash, "previous", old.Hash)
}

// watcher tells whether the config file, or a data file it read (a
// table), changed since it last looked.
type watcher struct {
	path    string
	files   map[string]fingerprint // by path as named; the config file and cfg.Files
	pending bool                   // a change was seen that has not yet held still
}

// settled reports a change once it has held still: true on the first look
// that sees no further change after one or more that did. A file being
// written in place (a large table) changes from look to look; it is
// loaded once it is whole, never half-written.
func (w *watcher) settled() bool {
	if w.changed() {
		w.pending = true
		return false
	}
	if w.pending {
		w.pending = false
		return true
	}
	return false
}

// fingerprint is what the watcher remembers of one file.
type fingerprint struct {
	resolved string
	mtime    time.Time
	size     int64
	sum      [sha256.Size]byte
}

// watch sets the data files to watch beside the config file: those of the
// config just loaded. Their current state is the baseline.
func (w *watcher) watch(files []string) {
	next := make(map[string]fingerprint, len(files)+1)
	for _, f := range append([]string{w.path}, files...) {
		fp, ok := w.files[f]
		if !ok {
			fp.update(f) // a first look: the baseline, never a change
		}
		next[f] = fp
	}
	w.files = next
}

// changed reports whether any watched file now differs from the last look,
// and remembers it. A file that can not be read (a ConfigMap mid-swap) is
// not a change: the next look sees the result.
func (w *watcher) changed() bool {
	if w.files == nil {
		w.files = map[string]fingerprint{}
	}
	if _, ok := w.files[w.path]; !ok {
		w.files[w.path] = fingerprint{}
	}
	diff := false
	for name, fp := range w.files {
		if fp.update(name) {
			diff = true
		}
		w.files[name] = fp
	}
	return diff
}

// update looks at the file again; it reports a change of content after a
// first successful look. The content is hashed as a stream: a table may be
// large.
func (fp *fingerprint) update(name string) bool {
	resolved, err := filepath.EvalSymlinks(name)
	if err != nil {
		return false
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return false
	}
	if resolved == fp.resolved && fi.ModTime().Equal(fp.mtime) && fi.Size() == fp.size {
		return false
	}
	f, err := os.Open(resolved)
	if err != nil {
		return false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	first := fp.resolved == ""
	diff := sum != fp.sum
	fp.resolved, fp.mtime, fp.size, fp.sum = resolved, fi.ModTime(), fi.Size(), sum
	return diff && !first
}
