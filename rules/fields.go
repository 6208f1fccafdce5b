package rules

import "github.com/headgate/headgate/rules/schema"

// newSchema builds the keys of every table from their declarations (the
// fields values beside the code of each area). It is a pure function of
// declarations that never change, so each Parse builds its own (a few
// dozen small maps) rather than sharing package state. The order of the
// top-level tables is the order of Tables[""], in which "did you mean"
// looks; a new table is one more fields value in this list.
func newSchema() *schema.Keys {
	return schema.NewKeys(
		serverFields, siteFields, sitemapFields, robotsFields, ruleFields, lookupTableFields, pageTableFields, hreflangTableFields, llmsFields, indexNowFields, normalizeFields, redirectFields, redirectTableFields, inspectorFields, tablesFields,
		experimentFields, variantFields,
		ruleRobotsFields, ogFields, imageFields, articleFields, twitterFields, twitterImageFields, entryFields, contentSignalFields, markdownFields, groupFields, llmsSectionFields,
		botsFields, botsAccessFields, botsCrawlerFields,
		watchFields,
	)
}

// decode reads table t, at key path path, into d with the loader as the
// schema.Reporter: see schema.Decode.
func decode[T any](l *loader, path string, t map[string]any, fs *schema.Fields[T], d T) {
	schema.Decode(l, l.keys, path, t, fs, d)
}

// Add is add, for schema.Reporter.
func (l *loader) Add(code, key, format string, args ...any) { l.add(code, key, format, args...) }
