package sitemap

import "context"

// Each generates the sitemap once, bypassing the cache, as WriteTo does,
// and calls fn for every URL it lists, in order, with its lastmod
// (YYYY-MM-DD, or "" when the entry has none). Every language version of a
// localized entry is one URL. fn must not block for long: the sources are
// read meanwhile, within their timeout. An unreadable source is an error,
// and fn may have seen some URLs by then. headgate indexnow reads the
// sitemap this way.
func (s *Sitemap) Each(ctx context.Context, fn func(loc, lastmod string)) error {
	if !s.enabled {
		return errDisabled
	}
	_, err := s.generateEach(ctx, fn)
	return err
}
