package rules

import (
	"strings"
	"testing"
)

// @ai-training in two groups would put each of its agents in both, and
// crawlers merge every group that names them: HG190, as for any agent
// named twice.
func TestAITrainingInTwoGroups(t *testing.T) {
	src := "[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n[robots]\n" +
		"[[robots.group]]\nuser_agents = [\"@ai-training\"]\ndisallow = [\"/a\"]\n" +
		"[[robots.group]]\nuser_agents = [\"@ai-training\", \"Foo\"]\nallow = [\"/b\"]\n"
	_, err := Parse("h.toml", []byte(src), nil)
	want := `HG190 h.toml:10: robots.group[1].user_agents[0]: "@ai-training" is in robots.group[0].user_agents[0] already`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	one := "[server]\nupstream = \"http://127.0.0.1:1\"\n[site]\nbase_url = \"https://notes.example\"\n[robots]\n" +
		"[[robots.group]]\nuser_agents = [\"@ai-training\"]\ndisallow = [\"/\"]\n" +
		"[[robots.group]]\nuser_agents = [\"GPTBot\"]\nallow = [\"/docs/\"]\n"
	if _, err := Parse("h.toml", []byte(one), nil); err != nil {
		t.Fatalf("one list and an agent of it in a group of its own: %v", err)
	}
}

func TestOGLocale(t *testing.T) {
	for in, want := range map[string]string{
		"de-AT": "de_AT", "de": "de", "EN-gb": "en_GB", "zh-Hant-TW": "zh_TW", "zh-hant": "zh_Hant", "es-419": "es_419", "pt-br": "pt_BR",
	} {
		if got := ogLocale(in); got != want {
			t.Errorf("ogLocale(%q) = %q, want %q", in, got, want)
		}
	}
}
