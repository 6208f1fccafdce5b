package insight

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Handler returns the admin listener's /crawlers page (SPEC §20.1): the
// window as self-contained HTML with inline SVG charts, no script and no
// external asset, or as JSON with ?format=json. Everything shown comes
// from clients (names of unknown agents never reach it, but paths do) and
// is escaped by html/template.
func (t *Tracker) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		s := t.Snapshot()
		if r.URL.Query().Get("format") == "json" {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.Encode(s) //nolint:errcheck // the client went away
			return
		}
		var buf bytes.Buffer
		if err := pageTmpl().Execute(&buf, newPage(s)); err != nil {
			http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src "+styleHash+"; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		w.Write(buf.Bytes()) //nolint:errcheck
	})
}

// The chart's geometry, in SVG user units.
const (
	chartW, chartH       = 760, 150
	refChartW, refChartH = 560, 90
	padL, padR           = 44, 8
	padT, padB           = 12, 34
	barGap               = 3
)

type bar struct {
	X, Y, W, H float64
	SpoofY     float64
	SpoofH     float64
	Title      string
}

type tick struct {
	X     float64
	Label string
}

type chart struct {
	ID        string
	Bars      []bar
	Ticks     []tick
	Max       uint64
	MaxY      float64
	BaseY     float64
	LabelY    float64
	AxisTitle string
	W, H      int
	Unit      string // "requests", "visits"
}

// pagePaths is how many top paths the HTML lists; the JSON has them all.
const pagePaths = 15

type pageCrawler struct {
	CrawlerWindow
	Paths   []PathCount
	Anchor  string
	Chart   chart
	Size    string
	Yes     uint64
	No      uint64
	Unverif uint64
}

type pageSource struct {
	SourceWindow
	Chart chart
}

type page struct {
	S         Snapshot
	Crawlers  []pageCrawler
	Sources   []pageSource
	Quiet     []string // sources with no visit
	Total     uint64
	Window    string
	PathsFrom string
}

func newPage(s Snapshot) page {
	p := page{S: s}
	if len(s.Hours) > 0 {
		p.Window = s.Hours[0].Format("2006-01-02 15:04") + " – " + s.Generated.Format("15:04") + " UTC"
	}
	p.PathsFrom = s.TopPathsSince.Format("2006-01-02 15:04 UTC")
	for _, c := range s.Crawlers {
		p.Total += c.Requests
		p.Crawlers = append(p.Crawlers, pageCrawler{
			CrawlerWindow: c,
			Anchor:        "c-" + c.Name,
			Chart:         newChart("chart-"+c.Name, s.Hours, c.ByHour, c.Spoofed, "requests", chartW, chartH),
			Size:          humanBytes(c.Bytes),
			Paths:         c.TopPaths[:min(len(c.TopPaths), pagePaths)],
			Yes:           c.Verified["yes"], No: c.Verified["no"], Unverif: c.Verified["unverifiable"],
		})
	}
	for _, r := range s.Referrals {
		if r.Total == 0 {
			p.Quiet = append(p.Quiet, r.Source)
			continue
		}
		p.Sources = append(p.Sources, pageSource{SourceWindow: r, Chart: newChart("ref-"+r.Source, s.Hours, r.ByHour, nil, "visits", refChartW, refChartH)})
	}
	return p
}

func newChart(id string, hours []time.Time, counts, spoofed []uint64, unit string, chartW, chartH int) chart {
	c := chart{ID: id, W: chartW, H: chartH, Unit: unit, BaseY: float64(chartH - padB), MaxY: padT, LabelY: float64(chartH - padB + 14)}
	for _, n := range counts {
		c.Max = max(c.Max, n)
	}
	scale := 0.0
	if c.Max > 0 {
		scale = (c.BaseY - padT) / float64(c.Max)
	}
	slot := float64(chartW-padL-padR) / float64(len(counts))
	for i, n := range counts {
		b := bar{X: padL + float64(i)*slot + barGap/2.0, W: slot - barGap, H: float64(n) * scale}
		b.Y = c.BaseY - b.H
		if n > 0 && b.H < 1 {
			b.H, b.Y = 1, c.BaseY-1
		}
		from := hours[i]
		b.Title = fmt.Sprintf("%s–%s UTC: %d %s", from.Format("Jan 2 15:04"), from.Add(time.Hour).Format("15:04"), n, unit)
		if spoofed != nil {
			b.SpoofH = float64(spoofed[i]) * scale
			b.SpoofY = c.BaseY - b.SpoofH
			if spoofed[i] > 0 {
				b.Title += fmt.Sprintf(", %d spoofed", spoofed[i])
			}
		}
		c.Bars = append(c.Bars, b)
		if i%3 == 0 {
			c.Ticks = append(c.Ticks, tick{X: b.X + b.W/2, Label: from.Format("15h")})
		}
	}
	c.AxisTitle = "hour (UTC), " + unit + " per hour"
	return c
}

func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

var styleHash = func() string {
	sum := sha256.Sum256([]byte(pageCSS))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// pageTmpl is parsed on the page's first showing, not at start: a proxy
// that never shows it does not keep its tree.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("crawlers").Funcs(template.FuncMap{
		"css": func() template.CSS { return template.CSS(pageCSS) },
		"f":   func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	}).Parse(pageHTML))
})
