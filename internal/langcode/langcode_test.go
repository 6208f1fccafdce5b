package langcode

import "testing"

// The lists are whole: ISO 639-1's 183 current codes and the deprecated
// "bh" and "sh"; ISO 3166-1's 249 assigned codes. Withdrawn codes are not
// in them ("iw" is "he", "in" "id", "ji" "yi", "jw" "jv"; "SU", "DD", "YU"
// and "AN" are no longer regions; "UK" never was one).
func TestLists(t *testing.T) {
	if len(languages) != 185 || len(regions) != 249 {
		t.Errorf("%d languages, %d regions", len(languages), len(regions))
	}
	for _, c := range []string{"en", "EN", "he", "id", "sh", "zh"} {
		if !Language(c) {
			t.Errorf("Language(%q) = false", c)
		}
	}
	for _, c := range []string{"iw", "in", "ji", "jw", "mo", "zz", "e", "eng", ""} {
		if Language(c) {
			t.Errorf("Language(%q) = true", c)
		}
	}
	for _, c := range []string{"GB", "gb", "US", "TW", "SS"} {
		if !Region(c) {
			t.Errorf("Region(%q) = false", c)
		}
	}
	for _, c := range []string{"UK", "SU", "DD", "YU", "AN", "ZZ", "419", "G"} {
		if Region(c) {
			t.Errorf("Region(%q) = true", c)
		}
	}
}
