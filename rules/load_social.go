package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/headgate/headgate/rules/schema"
)

// ogFields declares the keys of a rule's open_graph table.
var ogFields = &schema.Fields[into[*OpenGraph]]{Name: "rule.open_graph", List: []schema.Field[into[*OpenGraph]]{
	{Key: "title", Read: func(d into[*OpenGraph], key string, v any) { d.v.Title = d.tc.tmpl(key, v) }},
	{Key: "description", Read: func(d into[*OpenGraph], key string, v any) { d.v.Description = d.tc.tmpl(key, v) }},
	{Key: "type", Read: func(d into[*OpenGraph], key string, v any) { d.v.Type = d.tc.tmpl(key, v) }},
	{Key: "url", Read: func(d into[*OpenGraph], key string, v any) { d.v.URL = d.tc.urlTmpl(key, v) }},
	{Key: "site_name", Read: func(d into[*OpenGraph], key string, v any) { d.v.SiteName = d.tc.tmpl(key, v) }},
	{Key: "locale", Read: func(d into[*OpenGraph], key string, v any) { d.v.Locale = d.tc.tmpl(key, v) }},
	{Key: "image", Read: func(d into[*OpenGraph], key string, v any) {
		d.v.Image = []Image{}
		for i, item := range listOf(v) {
			ik := key
			if _, isArr := v.([]any); isArr {
				ik = fmt.Sprintf("%s[%d]", key, i)
			} else if _, isArr := v.([]map[string]any); isArr {
				ik = fmt.Sprintf("%s[%d]", key, i)
			}
			if img, ok := d.tc.image(ik, item); ok {
				d.v.Image = append(d.v.Image, img)
			}
		}
	}},
	{Key: "article", Read: func(d into[*OpenGraph], key string, v any) { d.v.Article = d.tc.article(key, v) }},
}}

func (tc *tmplCtx) openGraph(key string, v any) *OpenGraph {
	t, ok := tc.l.table(key, v)
	if !ok {
		return nil
	}
	og := &OpenGraph{}
	decode(tc.l, key, t, ogFields, into[*OpenGraph]{tc, og})
	return og
}

func listOf(x any) []any {
	switch a := x.(type) {
	case []any:
		return a
	case []map[string]any:
		out := make([]any, len(a))
		for i := range a {
			out[i] = a[i]
		}
		return out
	}
	return []any{x}
}

// imageFields declares the keys of an Open Graph image table.
var imageFields = &schema.Fields[into[*Image]]{Name: "rule.open_graph.image", List: []schema.Field[into[*Image]]{
	{Key: "url", Early: true, Read: func(d into[*Image], key string, v any) { d.v.URL = d.tc.urlTmpl(key, v) },
		NeedCode: "HG141", Need: "an image table needs url"},
	{Key: "width", Early: true, Read: func(d into[*Image], key string, v any) { d.tc.l.integer(key, v, 1, 100000, &d.v.Width) }},
	{Key: "height", Early: true, Read: func(d into[*Image], key string, v any) { d.tc.l.integer(key, v, 1, 100000, &d.v.Height) }},
	{Key: "alt", Early: true, Read: func(d into[*Image], key string, v any) { d.v.Alt = d.tc.tmpl(key, v) }},
	{Key: "type", Early: true, Read: func(d into[*Image], key string, v any) { d.v.Type = d.tc.tmpl(key, v) }},
	{Key: "secure_url", Early: true, Read: func(d into[*Image], key string, v any) { d.v.SecureURL = d.tc.urlTmpl(key, v) }},
}}

func (tc *tmplCtx) image(key string, x any) (Image, bool) {
	if s, ok := x.(string); ok {
		t := tc.urlTmpl(key, s)
		return Image{URL: t}, t != nil
	}
	t, ok := tc.l.table(key, x)
	if !ok {
		return Image{}, false
	}
	var img Image
	decode(tc.l, key, t, imageFields, into[*Image]{tc, &img})
	return img, img.URL != nil
}

// articleFields declares the keys of a rule's open_graph.article table.
var articleFields = &schema.Fields[into[*Article]]{Name: "rule.open_graph.article", List: []schema.Field[into[*Article]]{
	{Key: "published_time", Read: func(d into[*Article], key string, v any) { d.v.PublishedTime = d.tc.timeTmpl(key, v) }},
	{Key: "modified_time", Read: func(d into[*Article], key string, v any) { d.v.ModifiedTime = d.tc.timeTmpl(key, v) }},
	{Key: "expiration_time", Read: func(d into[*Article], key string, v any) { d.v.ExpirationTime = d.tc.timeTmpl(key, v) }},
	{Key: "authors", Read: func(d into[*Article], key string, v any) { d.v.Authors = d.tc.tmplList(key, v, d.v.Authors) }},
	{Key: "section", Read: func(d into[*Article], key string, v any) { d.v.Section = d.tc.tmpl(key, v) }},
	{Key: "tags", Read: func(d into[*Article], key string, v any) { d.v.Tags = d.tc.tmplList(key, v, d.v.Tags) }},
}}

func (tc *tmplCtx) article(key string, x any) *Article {
	t, ok := tc.l.table(key, x)
	if !ok {
		return nil
	}
	a := &Article{}
	decode(tc.l, key, t, articleFields, into[*Article]{tc, a})
	return a
}

// timeTmpl reads a template that may be written as a TOML date-time.
func (tc *tmplCtx) timeTmpl(key string, v any) *Template {
	if tm, ok := v.(time.Time); ok {
		v = tomlTime(tm)
	}
	return tc.tmpl(key, v)
}

// tmplList reads an array of templates; on a value that is not an array of
// strings it reports the problem and keeps old.
func (tc *tmplCtx) tmplList(key string, v any, old []*Template) []*Template {
	list, ok := tc.l.strList(key, v)
	if !ok {
		return old
	}
	var ts []*Template
	for i, s := range list {
		if tm := tc.tmpl(fmt.Sprintf("%s[%d]", key, i), s); tm != nil {
			ts = append(ts, tm)
		}
	}
	return ts
}

// twitterFields declares the keys of a rule's twitter table.
var twitterFields = &schema.Fields[into[*Twitter]]{Name: "rule.twitter", List: []schema.Field[into[*Twitter]]{
	{Key: "card", Read: func(d into[*Twitter], key string, v any) {
		var c string
		d.tc.l.enum(key, v, &c, "summary", "summary_large_image", "app", "player")
		if c != "" {
			d.v.Card = &Template{Raw: c, parts: []tpart{{lit: c}}}
		}
	}},
	{Key: "site", Read: func(d into[*Twitter], key string, v any) { d.v.Site = d.tc.tmpl(key, v) }},
	{Key: "creator", Read: func(d into[*Twitter], key string, v any) { d.v.Creator = d.tc.tmpl(key, v) }},
	{Key: "title", Read: func(d into[*Twitter], key string, v any) { d.v.Title = d.tc.tmpl(key, v) }},
	{Key: "description", Read: func(d into[*Twitter], key string, v any) { d.v.Description = d.tc.tmpl(key, v) }},
	{Key: "image", Read: func(d into[*Twitter], key string, v any) {
		d.v.Image = []TwitterImage{}
		_, isArr := v.([]any)
		_, isTArr := v.([]map[string]any)
		for i, item := range listOf(v) {
			ik := key
			if isArr || isTArr {
				ik = fmt.Sprintf("%s[%d]", key, i)
			}
			if img, ok := d.tc.twitterImage(ik, item); ok {
				d.v.Image = append(d.v.Image, img)
			}
		}
	}},
	{Key: "url", Read: func(d into[*Twitter], key string, v any) { d.v.URL = d.tc.urlTmpl(key, v) }},
}}

// twitterImageFields declares the keys of a twitter image table.
var twitterImageFields = &schema.Fields[into[*TwitterImage]]{Name: "rule.twitter.image", List: []schema.Field[into[*TwitterImage]]{
	{Key: "url", Early: true, Read: func(d into[*TwitterImage], key string, v any) { d.v.URL = d.tc.urlTmpl(key, v) },
		NeedCode: "HG141", Need: "an image table needs url"},
	{Key: "alt", Early: true, Read: func(d into[*TwitterImage], key string, v any) { d.v.Alt = d.tc.tmpl(key, v) }},
}}

func (tc *tmplCtx) twitter(key string, v any) *Twitter {
	t, ok := tc.l.table(key, v)
	if !ok {
		return nil
	}
	tw := &Twitter{}
	decode(tc.l, key, t, twitterFields, into[*Twitter]{tc, tw})
	return tw
}

// twitterImage reads one twitter image: a URL, or a table with url and alt.
func (tc *tmplCtx) twitterImage(key string, item any) (TwitterImage, bool) {
	if s, ok := item.(string); ok {
		u := tc.urlTmpl(key, s)
		return TwitterImage{URL: u}, u != nil
	}
	it, ok := tc.l.table(key, item)
	if !ok {
		return TwitterImage{}, false
	}
	var img TwitterImage
	decode(tc.l, key, it, twitterImageFields, into[*TwitterImage]{tc, &img})
	return img, img.URL != nil
}

// jsonTree turns a TOML or JSON value into a JSON-LD tree whose strings are
// templates.
func (tc *tmplCtx) jsonTree(key string, v any) any {
	switch x := v.(type) {
	case string:
		if t := tc.tmpl(key, x); t != nil {
			return t
		}
		return x
	case time.Time:
		return tomlTime(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			tc.l.add("HG160", key, "JSON has no NaN or infinity")
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range sortedKeys(x) {
			out[k] = tc.jsonTree(key+"."+k, x[k])
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = tc.jsonTree(fmt.Sprintf("%s[%d]", key, i), val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = tc.jsonTree(fmt.Sprintf("%s[%d]", key, i), val)
		}
		return out
	}
	return v
}

// maxJSONLDFile bounds a json_ld_file: its blocks go into every page.
const maxJSONLDFile = 1 << 20

// readSmallFile reads a regular file of at most limit bytes. A device or a
// FIFO named by mistake (/dev/zero, a pipe) must not hang or fill memory.
func readSmallFile(name string, limit int64) ([]byte, error) {
	// Stat before Open: opening a FIFO blocks until someone writes to it.
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return data, nil
}

// tomlTime writes a TOML date-time as it was written: RFC 3339 with its
// offset, and the local forms (no offset) without one, rather than claiming
// UTC for them.
func tomlTime(t time.Time) string {
	// BurntSushi/toml marks the local forms with these zone names (and the
	// machine's offset, which must not leak into what headgate writes).
	switch t.Location().String() {
	case "date-local":
		return t.Format(time.DateOnly)
	case "time-local":
		return t.Format("15:04:05.999999999")
	case "datetime-local":
		return t.Format("2006-01-02T15:04:05.999999999")
	}
	return t.Format(time.RFC3339Nano)
}

func (tc *tmplCtx) jsonFile(key, name string) []any {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(tc.l.cfg.Dir, p)
	}
	data, err := readSmallFile(p, maxJSONLDFile)
	if err != nil {
		tc.l.add("HG160", key, "can not read %s: %v", p, err)
		return nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		tc.l.add("HG160", key, "%s is not JSON: %v", p, err)
		return nil
	}
	var blocks []any
	switch x := v.(type) {
	case map[string]any:
		blocks = []any{x}
	case []any:
		blocks = x
	default:
		tc.l.add("HG160", key, "%s must hold a JSON object or an array of objects", p)
		return nil
	}
	var out []any
	for i, b := range blocks {
		obj, ok := b.(map[string]any)
		if !ok || obj["@type"] == nil && obj["@graph"] == nil {
			tc.l.add("HG160", key, "%s: block %d needs @type or @graph", p, i)
			continue
		}
		out = append(out, tc.jsonTree(key, obj))
	}
	return out
}
