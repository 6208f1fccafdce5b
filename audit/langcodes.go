package audit

import "strings"

// The code lists hreflang values are checked against (SPEC §15,
// hreflang-invalid-code), kept here and nowhere else.

// iso639_1 is every two-letter language code of ISO 639-1: the 183
// current ones, and the deprecated "bh" and "sh", still met on real
// sites. The withdrawn "iw", "in", "ji" and "jw" are not in it (they are
// "he", "id", "yi" and "jv").
const iso639_1 = "aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy " +
	"da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz " +
	"ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv " +
	"mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu " +
	"rm rn ro ru rw sa sc sd se sg sh si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty " +
	"ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"

// iso3166_1 is every officially assigned ISO 3166-1 alpha-2 code (249).
// "UK" is not one ("GB" is): Google's documentation names "en-UK" as a
// common mistake.
const iso3166_1 = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT " +
	"JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW"

var (
	languages = setOf(iso639_1)
	regions   = setOf(strings.ToLower(iso3166_1))
)

func setOf(list string) map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(list) {
		m[c] = true
	}
	return m
}

// hreflangProblem returns why an hreflang value is not one Google reads,
// "" when it is: "x-default", or an ISO 639-1 language, optionally a
// four-letter ISO 15924 script ("zh-Hant"), optionally an ISO 3166-1
// alpha-2 region ("en-GB", "zh-Hant-TW"). Case does not matter; the
// separator is "-" ("en_US" is not read).
func hreflangProblem(code string) string {
	c := strings.ToLower(strings.TrimSpace(code))
	if c == "x-default" {
		return ""
	}
	if c == "" {
		return "is empty"
	}
	if strings.Contains(c, "_") {
		return "uses \"_\": the separator is \"-\" (" + strings.ReplaceAll(clip(strings.TrimSpace(code), 40), "_", "-") + ")"
	}
	parts := strings.Split(c, "-")
	if !languages[parts[0]] {
		if len(parts[0]) == 2 {
			return "names no ISO 639-1 language: \"" + clip(parts[0], 40) + "\" is not one"
		}
		return "does not start with a two-letter ISO 639-1 language code"
	}
	rest := parts[1:]
	if len(rest) > 0 && len(rest[0]) == 4 && isLetters(rest[0]) {
		rest = rest[1:] // an ISO 15924 script
	}
	switch {
	case len(rest) == 0:
		return ""
	case len(rest) > 1:
		return "has more than a language, a script and a region"
	case len(rest[0]) != 2 || !regions[rest[0]]:
		return "names no ISO 3166-1 alpha-2 region: \"" + clip(rest[0], 40) + "\" is not one"
	}
	return ""
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}
