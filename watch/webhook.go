package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SenderOptions configures a Sender. Only URL is required.
type SenderOptions struct {
	URL    string
	Format string // FormatJSON (default) or FormatSlack
	// Client sends the requests; nil is a client with a 10 s timeout that
	// follows no redirect (a redirect is a failure, not retried).
	Client *http.Client
	// Registerer gets headgate_change_webhook_events_total{outcome}; nil
	// registers nothing.
	Registerer prometheus.Registerer
	// QueueSize bounds the events waiting (default 1000); when it is full
	// the oldest is dropped and counted.
	QueueSize int
	// Attempts bounds the tries of one batch on a network error, a 5xx or
	// a 429 (default 5), waiting 1 s, 2 s, 4 s… between them.
	Attempts int
	// Tick says when the events gathered go out; nil is every 10 s.
	Tick <-chan time.Time
	// After waits between attempts; nil is time.After.
	After func(time.Duration) <-chan time.Time
}

// maxBatch bounds the events of one request.
const maxBatch = 500

// Sender POSTs events to a webhook in batches, from one goroutine of its
// own: Send never blocks on the network.
type Sender struct {
	o      SenderOptions
	client *http.Client
	after  func(time.Duration) <-chan time.Time
	tick   <-chan time.Time
	ticker *time.Ticker

	mu         sync.Mutex
	q          []Event // a ring of QueueSize
	head, n    int
	dropped    int
	closed     bool
	sent, fail int

	outcome    *prometheus.CounterVec
	stop, done chan struct{}
	ctx        context.Context
	cancel     context.CancelFunc
	closeOnce  sync.Once
	closeErr   error
}

// NewSender starts a Sender; Close stops it.
func NewSender(o SenderOptions) (*Sender, error) {
	if o.Format == "" {
		o.Format = FormatJSON
	}
	if o.Format != FormatJSON && o.Format != FormatSlack {
		return nil, fmt.Errorf("watch: webhook format %q", o.Format)
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 1000
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	s := &Sender{o: o, client: o.Client, after: o.After, tick: o.Tick, q: make([]Event, o.QueueSize),
		stop: make(chan struct{}), done: make(chan struct{})}
	if s.client == nil {
		s.client = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if s.after == nil {
		s.after = time.After
	}
	if s.tick == nil {
		s.ticker = time.NewTicker(10 * time.Second)
		s.tick = s.ticker.C
	}
	s.outcome = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "headgate_change_webhook_events_total",
		Help: "Change events for the webhook by outcome: sent, dropped (the queue was full), failed (the receiver refused or the attempts ran out).",
	}, []string{"outcome"})
	if o.Registerer != nil {
		if err := o.Registerer.Register(s.outcome); err != nil {
			return nil, err
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	go s.loop()
	return s, nil
}

// Send queues e; when the queue is full, the oldest event goes.
func (s *Sender) Send(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.n == len(s.q) {
		s.q[s.head] = Event{}
		s.head = (s.head + 1) % len(s.q)
		s.n--
		s.dropped++
		s.outcome.WithLabelValues("dropped").Inc()
	}
	s.q[(s.head+s.n)%len(s.q)] = e
	s.n++
}

// Stats returns the events sent, dropped from a full queue and failed.
func (s *Sender) Stats() (sent, dropped, failed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent, s.dropped, s.fail
}

// take removes up to maxBatch events from the queue.
func (s *Sender) take() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := min(s.n, maxBatch)
	if k == 0 {
		return nil
	}
	b := make([]Event, k)
	for i := range b {
		j := (s.head + i) % len(s.q)
		b[i], s.q[j] = s.q[j], Event{}
	}
	s.head, s.n = (s.head+k)%len(s.q), s.n-k
	return b
}

func (s *Sender) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.tick:
			s.flush(s.ctx)
		}
	}
}

// flush sends what is queued, batch by batch, until the queue is empty or
// ctx ends.
func (s *Sender) flush(ctx context.Context) error {
	for {
		b := s.take()
		if b == nil {
			return nil
		}
		err := s.post(ctx, b)
		s.mu.Lock()
		if err == nil {
			s.sent += len(b)
		} else {
			s.fail += len(b)
		}
		s.mu.Unlock()
		if err == nil {
			s.outcome.WithLabelValues("sent").Add(float64(len(b)))
		} else {
			s.outcome.WithLabelValues("failed").Add(float64(len(b)))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// errRefused: the receiver answered, and trying again will not help.
var errRefused = errors.New("webhook refused the events")

// post sends one batch, retrying network errors, 5xx and 429.
func (s *Sender) post(ctx context.Context, b []Event) error {
	body, err := encode(s.o.Format, b)
	if err != nil {
		return err
	}
	wait := time.Second
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.o.URL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "headgate-watch")
		res, err := s.client.Do(req)
		if err == nil {
			io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
			switch {
			case res.StatusCode >= 200 && res.StatusCode < 300:
				return nil
			case res.StatusCode < 500 && res.StatusCode != http.StatusTooManyRequests:
				return fmt.Errorf("%w: %s", errRefused, res.Status)
			}
			err = fmt.Errorf("webhook: %s", res.Status)
		}
		if attempt >= s.o.Attempts {
			return err
		}
		select {
		case <-s.after(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait *= 2
	}
}

// Close stops the sender and sends what it still holds until ctx ends; it
// returns ctx's error when events were left unsent.
func (s *Sender) Close(ctx context.Context) error { return s.close(ctx) }

func (s *Sender) close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		failed := s.fail
		s.mu.Unlock()
		close(s.stop)
		go func() { // a send under way ends with ctx
			select {
			case <-ctx.Done():
				s.cancel()
			case <-s.done:
			}
		}()
		<-s.done
		if s.ticker != nil {
			s.ticker.Stop()
		}
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.closeErr = s.flush(ctx)
		s.cancel()
		s.mu.Lock()
		if s.closeErr == nil && s.fail > failed && ctx.Err() != nil {
			s.closeErr = ctx.Err() // a batch under way was cut at the deadline
		}
		s.mu.Unlock()
	})
	return s.closeErr
}

// encode writes a batch in the webhook's format: a JSON array of events,
// or a Slack/Mattermost message of one line per event.
func encode(format string, b []Event) ([]byte, error) {
	if format != FormatSlack {
		return json.Marshal(b)
	}
	var t strings.Builder
	for i, e := range b {
		if i > 0 {
			t.WriteByte('\n')
		}
		fmt.Fprintf(&t, "[%s] %s: %s %s → %s", e.Severity, slackText(e.URL), e.Signal, slackValue(e.Before), slackValue(e.After))
	}
	return json.Marshal(struct {
		Text string `json:"text"`
	}{t.String()})
}

// slackText escapes what Slack's and Mattermost's markup read (&, <, >:
// no hostile title makes a link or a mention) and keeps a value on its
// line.
func slackText(s string) string {
	return slackEscaper.Replace(s)
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\n", " ", "\r", " ", "\t", " ")

func slackValue(s string) string {
	if s == "" {
		return "(none)"
	}
	return "“" + slackText(s) + "”"
}
