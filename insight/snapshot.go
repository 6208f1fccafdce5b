package insight

import (
	"sort"
	"time"
)

// Snapshot is the window as the page and its JSON show it: the 24 hours
// ending with the current one, oldest first.
type Snapshot struct {
	Generated time.Time       `json:"generated"`
	Hours     []time.Time     `json:"hours"` // the start of each hour, UTC
	Crawlers  []CrawlerWindow `json:"crawlers"`
	Referrals []SourceWindow  `json:"referrals"`
	// TopPathsSince is when the top paths start counting (12 to 24 hours
	// back: the sketches cover half-days).
	TopPathsSince time.Time `json:"top_paths_since"`
}

// CrawlerWindow is one crawler's last 24 hours.
type CrawlerWindow struct {
	Name     string   `json:"name"`
	Category string   `json:"category,omitempty"`
	Operator string   `json:"operator,omitempty"`
	Requests uint64   `json:"requests"`
	Bytes    uint64   `json:"bytes"`
	ByHour   []uint64 `json:"by_hour"`         // requests, oldest hour first
	Spoofed  []uint64 `json:"spoofed_by_hour"` // of them verified="no"
	// Verified: "yes" (ip, dns or signature), "no" (spoofed),
	// "unverifiable", and each verdict of "yes".
	Verified         map[string]uint64 `json:"verified"`
	Status           map[string]uint64 `json:"status"` // 2xx … 5xx
	RobotsViolations uint64            `json:"robots_violations"`
	TopPaths         []PathCount       `json:"top_paths"`
}

// SourceWindow is one referral source's last 24 hours.
type SourceWindow struct {
	Source string   `json:"source"`
	Total  uint64   `json:"total"`
	ByHour []uint64 `json:"by_hour"`
}

// Snapshot reads the window. Crawlers with no request in it are left out;
// the rest come busiest first. Every referral source is listed.
func (t *Tracker) Snapshot() Snapshot {
	now := t.now()
	cur := now.Unix() / 3600
	first := cur - Hours + 1
	s := Snapshot{Generated: now.UTC(), TopPathsSince: time.Unix((cur/halfDay-1)*halfDay*3600, 0).UTC()}
	for h := first; h <= cur; h++ {
		s.Hours = append(s.Hours, time.Unix(h*3600, 0).UTC())
	}
	set := t.set.Load()
	for ci, c := range set.list {
		w := CrawlerWindow{Name: c.name, Category: set.meta[ci].category, Operator: set.meta[ci].operator,
			ByHour: make([]uint64, Hours), Spoofed: make([]uint64, Hours),
			Verified: map[string]uint64{}, Status: map[string]uint64{}}
		var verdicts [nVerified]uint64
		var classes [nClasses]uint64
		for i, h := 0, first; h <= cur; i, h = i+1, h+1 {
			b := &c.hours[h%Hours]
			if b.hour.Load() != h+1 {
				continue
			}
			n := b.requests.Load()
			w.ByHour[i] = n
			w.Requests += n
			w.Bytes += b.bytes.Load()
			w.Spoofed[i] = b.verdicts[vNo].Load()
			for v := range verdicts {
				verdicts[v] += b.verdicts[v].Load()
			}
			for k := range classes {
				classes[k] += b.classes[k].Load()
			}
			w.RobotsViolations += b.violations.Load()
		}
		if w.Requests == 0 {
			continue
		}
		w.Verified["yes"] = verdicts[vIP] + verdicts[vDNS] + verdicts[vSignature]
		w.Verified["no"] = verdicts[vNo]
		w.Verified["unverifiable"] = verdicts[vUnverifiable]
		for _, v := range []int{vIP, vDNS, vSignature} {
			w.Verified[verifiedLabels[v]] = verdicts[v]
		}
		for k, l := range classLabels {
			w.Status[l] = classes[k]
		}
		w.TopPaths = c.topPaths(cur, t.topK)
		s.Crawlers = append(s.Crawlers, w)
	}
	sort.SliceStable(s.Crawlers, func(i, j int) bool { return s.Crawlers[i].Requests > s.Crawlers[j].Requests })
	for i, name := range sourceNames {
		w := SourceWindow{Source: name, ByHour: make([]uint64, Hours)}
		for k, h := 0, first; h <= cur; k, h = k+1, h+1 {
			b := &t.refHours[h%Hours]
			if b.hour.Load() != h+1 {
				continue
			}
			w.ByHour[k] = b.counts[i].Load()
			w.Total += w.ByHour[k]
		}
		s.Referrals = append(s.Referrals, w)
	}
	sort.SliceStable(s.Referrals, func(i, j int) bool { return s.Referrals[i].Total > s.Referrals[j].Total })
	return s
}

// topPaths merges the current and the previous half-day's sketches.
func (c *crawler) topPaths(cur int64, k int) []PathCount {
	half := cur / halfDay
	m := map[string]int{}
	var out []PathCount
	c.mu.Lock()
	for i := range c.top {
		if h := c.topHalf[i] - 1; h == half || h == half-1 {
			out = c.top[i].appendTo(out, m)
		}
	}
	c.mu.Unlock()
	return sortPaths(out, k)
}
