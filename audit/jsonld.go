package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Bounds of the JSON-LD walk, whatever a block holds: the nodes (objects)
// looked at, and how deep.
const (
	maxLDNodes = 10000
	maxLDDepth = 64
	maxLDTypes = 50 // distinct @type values kept per page, for -compare
)

// ldNeed is one requirement of a type: any one of props, non-empty. when,
// if set, says the requirement applies to that node only.
type ldNeed struct {
	props []string
	when  func(n *ldNode) bool
}

// ldRequired lists, per schema.org type, the properties Google's
// structured data documentation marks required for the rich result of
// that type (docs/audit.md, jsonld-required, cites each page).
var ldRequired = map[string][]ldNeed{
	"Product": {
		{props: []string{"name"}},
		{props: []string{"offers", "review", "aggregateRating"}},
	},
	"Offer":          {{props: []string{"price", "priceSpecification"}}},
	"AggregateOffer": {{props: []string{"lowPrice"}}, {props: []string{"priceCurrency"}}},
	"BreadcrumbList": {{props: []string{"itemListElement"}}},
	"ListItem": {
		{props: []string{"position"}, when: inBreadcrumb},
		{props: []string{"name"}, when: func(n *ldNode) bool { return inBreadcrumb(n) && !n.itemNamed }},
		{props: []string{"item"}, when: func(n *ldNode) bool { return inBreadcrumb(n) && !n.last }},
	},
	"Event":   {{props: []string{"name"}}, {props: []string{"startDate"}}, {props: []string{"location"}}},
	"Recipe":  {{props: []string{"name"}}, {props: []string{"image"}}},
	"FAQPage": {{props: []string{"mainEntity"}}},
	"Question": {
		{props: []string{"name"}, when: inFAQ},
		{props: []string{"acceptedAnswer"}, when: inFAQ},
	},
	"Answer": {{props: []string{"text"}, when: func(n *ldNode) bool { return n.parentProp == "acceptedAnswer" }}},
	"JobPosting": {
		{props: []string{"datePosted"}}, {props: []string{"description"}}, {props: []string{"hiringOrganization"}},
		{props: []string{"title"}},
		{props: []string{"jobLocation"}, when: func(n *ldNode) bool { return !n.telecommute }},
		{props: []string{"applicantLocationRequirements"}, when: func(n *ldNode) bool { return n.telecommute }},
	},
	"Review": {
		{props: []string{"author"}}, {props: []string{"reviewRating"}},
		{props: []string{"itemReviewed"}, when: notNested("review", "reviews")},
	},
	"AggregateRating": {
		{props: []string{"ratingValue"}}, {props: []string{"ratingCount", "reviewCount"}},
		{props: []string{"itemReviewed"}, when: notNested("aggregateRating")},
	},
	"Rating": {{props: []string{"ratingValue"}, when: func(n *ldNode) bool { return n.parentProp == "reviewRating" }}},
}

func inBreadcrumb(n *ldNode) bool {
	return n.parentType == "BreadcrumbList" && n.parentProp == "itemListElement"
}
func inFAQ(n *ldNode) bool { return n.parentType == "FAQPage" && n.parentProp == "mainEntity" }

// notNested: itemReviewed is implied when the node is the value of one of
// props on the item it reviews.
func notNested(props ...string) func(n *ldNode) bool {
	return func(n *ldNode) bool {
		for _, p := range props {
			if n.parentProp == p {
				return false
			}
		}
		return true
	}
}

// ldNode is what the required check needs of one typed JSON-LD object.
type ldNode struct {
	types       []string
	id          string
	props       map[string]bool // properties with a non-empty value
	parentType  string
	parentProp  string
	last        bool // the last item of its parent's list
	itemNamed   bool // a ListItem whose item has a name
	telecommute bool // a JobPosting with jobLocationType TELECOMMUTE
}

// ldMissing is one required property a node lacks.
type ldMissing struct {
	typ   string
	props []string
}

func (m ldMissing) String() string {
	if len(m.props) == 1 {
		return fmt.Sprintf("%s lacks %s", m.typ, m.props[0])
	}
	return fmt.Sprintf("%s lacks %s (one of them is required)", m.typ, strings.Join(m.props, ", "))
}

// ldWalk visits a decoded JSON-LD value without recursion, at most
// maxLDNodes objects and maxLDDepth levels deep. It returns the @type
// values met, what typed nodes lack of ldRequired, and a note when a bound
// cut the walk short. An @id names a node and is never followed, so @id
// cycles cost nothing; the properties of nodes that share an @id count
// for each other.
func ldWalk(v any) (types []string, missing []ldMissing, note string) {
	nodes, byID, types, note := ldNodes(v)
	return types, ldMissingWith(nodes, byID), note
}

// ldNodes walks a decoded JSON-LD value (see ldWalk) and returns its typed
// nodes, the properties of each @id, the @type values met and a note.
func ldNodes(v any) (nodes []*ldNode, byID map[string]map[string]bool, types []string, note string) {
	type item struct {
		v          any
		depth      int
		parentType string
		parentProp string
		last       bool
	}
	stack := []item{{v: v}}
	byID = map[string]map[string]bool{}
	seenType := map[string]bool{}
	visited := 0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > maxLDDepth {
			note = fmt.Sprintf("JSON-LD nested deeper than %d levels: not checked past that", maxLDDepth)
			continue
		}
		switch x := it.v.(type) {
		case []any:
			for i := len(x) - 1; i >= 0; i-- {
				stack = append(stack, item{x[i], it.depth + 1, it.parentType, it.parentProp, i == len(x)-1})
			}
		case map[string]any:
			visited++
			if visited > maxLDNodes {
				note = fmt.Sprintf("JSON-LD with more than %d nodes: the rest are not checked", maxLDNodes)
				stack = nil
				break
			}
			n := &ldNode{parentType: it.parentType, parentProp: it.parentProp, last: it.last, props: map[string]bool{}}
			for _, t := range strs(x["@type"]) {
				if i := strings.LastIndexAny(t, "/:#"); i >= 0 {
					t = t[i+1:]
				}
				n.types = append(n.types, t)
				if !seenType[t] && len(seenType) < maxLDTypes {
					seenType[t] = true
					types = append(types, t)
				}
			}
			if ids := strs(x["@id"]); len(ids) > 0 {
				n.id = ids[0]
			}
			typ := ""
			if len(n.types) > 0 {
				typ = n.types[0]
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys) // a stable order of findings
			for _, k := range keys {
				val := x[k]
				if !strings.HasPrefix(k, "@") && nonEmpty(val) {
					n.props[k] = true
				}
				if k == "@context" {
					continue
				}
				switch val.(type) {
				case map[string]any, []any:
					stack = append(stack, item{val, it.depth + 1, typ, k, true})
				}
			}
			if item, ok := x["item"].(map[string]any); ok && nonEmpty(item["name"]) {
				n.itemNamed = true
			}
			for _, t := range strs(x["jobLocationType"]) {
				if strings.EqualFold(t, "TELECOMMUTE") {
					n.telecommute = true
				}
			}
			if n.id != "" {
				m := byID[n.id]
				if m == nil {
					m = map[string]bool{}
					byID[n.id] = m
				}
				for p := range n.props {
					m[p] = true
				}
			}
			if len(n.types) > 0 {
				nodes = append(nodes, n)
			}
		}
	}
	return nodes, byID, types, note
}

// ldMissingWith is what typed nodes lack of ldRequired, the properties of
// nodes that share an @id counting for each other (byID: a page's blocks
// together, since a node may be described in one block and completed in
// another).
func ldMissingWith(nodes []*ldNode, byID map[string]map[string]bool) (missing []ldMissing) {
	for _, n := range nodes {
		has := func(p string) bool { return n.props[p] || n.id != "" && byID[n.id][p] }
		if n.id != "" && len(n.props) == 0 {
			continue // a reference to a node described elsewhere
		}
		for _, t := range n.types {
			for _, need := range ldRequired[t] {
				if need.when != nil && !need.when(n) {
					continue
				}
				ok := false
				for _, p := range need.props {
					ok = ok || has(p)
				}
				if !ok {
					missing = append(missing, ldMissing{t, need.props})
				}
			}
		}
	}
	return missing
}

// nonEmpty reports whether a JSON value says something: not null, not "",
// not an empty array or object.
func nonEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return strings.TrimSpace(x) != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// pageTypes are the schema.org types whose url and @id name the page
// itself; an Organization's or a WebSite's name the site, and are not
// compared with the canonical.
var pageTypes = map[string]bool{
	"WebPage": true, "AboutPage": true, "CheckoutPage": true, "CollectionPage": true,
	"ContactPage": true, "FAQPage": true, "ItemPage": true, "MedicalWebPage": true,
	"ProfilePage": true, "QAPage": true, "RealEstateListing": true, "SearchResultsPage": true,
	"Article": true, "NewsArticle": true, "BlogPosting": true, "TechArticle": true,
	"ScholarlyArticle": true, "Report": true, "SocialMediaPosting": true,
	"DiscussionForumPosting": true, "LiveBlogPosting": true, "OpinionNewsArticle": true,
	"ReviewNewsArticle": true, "AnalysisNewsArticle": true, "BackgroundNewsArticle": true,
	"ReportageNewsArticle": true, "AdvertiserContentArticle": true, "SatiricalArticle": true,
	"Product": true, "Recipe": true, "Event": true, "Course": true, "JobPosting": true,
	"Book": true, "HowTo": true, "Dataset": true,
}

// parseLD checks one ld+json block and collects the URLs its page nodes
// give for themselves.
func parseLD(text string) ldBlock {
	t := strings.TrimSpace(text)
	if t == "" {
		return ldBlock{err: "is empty"}
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return ldBlock{err: "is not JSON: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return ldBlock{err: "is not JSON: more data after the value"}
	}
	var b ldBlock
	switch x := v.(type) {
	case map[string]any:
		if !typedOrGraph(x) {
			return ldBlock{err: "has no @type or @graph"}
		}
		b.node(x)
	case []any:
		if len(x) == 0 {
			return ldBlock{err: "is an empty array"}
		}
		for i, item := range x {
			m, ok := item.(map[string]any)
			if !ok || !typedOrGraph(m) {
				return ldBlock{err: fmt.Sprintf("item %d has no @type or @graph", i+1)}
			}
			b.node(m)
		}
	default:
		return ldBlock{err: "is neither an object nor an array"}
	}
	b.nodes, b.ids, b.types, b.note = ldNodes(v)
	b.missing = ldMissingWith(b.nodes, b.ids)
	return b
}

func typedOrGraph(m map[string]any) bool {
	_, t := m["@type"]
	_, g := m["@graph"]
	return t || g
}

func (b *ldBlock) node(m map[string]any) {
	if g, ok := m["@graph"].([]any); ok {
		for _, item := range g {
			if n, ok := item.(map[string]any); ok {
				b.node(n)
			}
		}
	}
	typ := ""
	for _, t := range strs(m["@type"]) {
		if i := strings.LastIndexAny(t, "/:#"); i >= 0 {
			t = t[i+1:]
		}
		if pageTypes[t] {
			typ = t
			break
		}
	}
	if typ != "" {
		for _, prop := range []string{"@id", "url"} {
			for _, s := range strs(m[prop]) {
				b.refs = append(b.refs, ldRef{typ, prop, s})
			}
		}
	}
	// mainEntityOfPage names the page on any node.
	switch me := m["mainEntityOfPage"].(type) {
	case string:
		b.refs = append(b.refs, ldRef{firstType(m), "mainEntityOfPage", me})
	case map[string]any:
		for _, s := range strs(me["@id"]) {
			b.refs = append(b.refs, ldRef{firstType(m), "mainEntityOfPage", s})
		}
	}
}

func firstType(m map[string]any) string {
	if ts := strs(m["@type"]); len(ts) > 0 {
		return ts[0]
	}
	return "node"
}

// strs returns a JSON value's strings: a string, or the strings of an array.
func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
