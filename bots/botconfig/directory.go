package botconfig

import (
	"slices"
	"strings"
)

// Category says what a crawler fetches for.
type Category string

// The categories of SPEC §18.1.
const (
	Search      Category = "search"       // a search engine's index
	AITraining  Category = "ai-training"  // collects content to train models
	AISearch    Category = "ai-search"    // an AI product's search index
	AIAssistant Category = "ai-assistant" // fetches for a person's prompt
	Preview     Category = "preview"      // link previews in chats and social posts
	SEOTool     Category = "seo-tool"     // SEO and backlink crawlers
	Monitor     Category = "monitor"      // uptime and performance monitors
)

// Categories is every category, in the order docs/bots.md lists them.
var Categories = []Category{Search, AITraining, AISearch, AIAssistant, Preview, SEOTool, Monitor}

// KnownCategory reports whether c is one of Categories.
func KnownCategory(c Category) bool { return slices.Contains(Categories, c) }

// RangesFormat names the layout of a published IP-range file. Every
// operator that publishes one today uses Google's layout.
type RangesFormat string

// FormatPrefixes is {"creationTime": …, "prefixes": [{"ipv4Prefix": …},
// {"ipv6Prefix": …}]}, the layout of Google, Bing, OpenAI, Apple,
// Perplexity, DuckDuckGo and Common Crawl.
const FormatPrefixes RangesFormat = "prefixes"

// Crawler is one directory entry; `[[bots.crawler]]` in the config has the
// same fields. The range file of an entry is `<ranges_dir>/<Name>.json`.
type Crawler struct {
	Name     string   `toml:"name"`     // lower-case, unique: "googlebot"
	Tokens   []string `toml:"tokens"`   // user-agent product tokens: one word each of 3-64 bytes of A-Z a-z 0-9 _ -, matched case-insensitively as a whole word
	Category Category `toml:"category"` // one of Categories
	// RangesURL is where the operator publishes its IP ranges ("" = none).
	RangesURL    string       `toml:"ranges_url"`
	RangesFormat RangesFormat `toml:"ranges_format"` // default FormatPrefixes
	// Domains are the reverse-DNS suffixes ("googlebot.com"): a PTR name
	// must equal one or end in "."+one.
	Domains []string `toml:"domains"`
	// SignatureAgent is the Web Bot Auth agent origin ("https://chatgpt.com").
	SignatureAgent string `toml:"signature_agent"`
	// Operator and Source are for people (docs/bots.md); not used to decide.
	Operator string `toml:"operator"`
	Source   string `toml:"source"`
}

// Verifiable reports whether the entry publishes any way to verify it.
func (c *Crawler) Verifiable() bool {
	return c.RangesURL != "" || len(c.Domains) > 0 || c.SignatureAgent != ""
}

// Directory returns a fresh copy of the built-in directory (docs/bots.md
// lists each entry's sources and the date they were checked). Callers may
// change the copy.
func Directory() []Crawler {
	out := make([]Crawler, len(builtin))
	for i, c := range builtin {
		c.Tokens = slices.Clone(c.Tokens)
		c.Domains = slices.Clone(c.Domains)
		out[i] = c
	}
	return out
}

// Merge returns base with the operator's entries applied: an entry whose
// name is in base replaces its non-empty fields (so `{name="bytespider",
// category="ai-search"}` only changes the category); a new name is
// appended. categories maps a crawler name to a replacement category (the
// `[bots.categories]` shortcut); it is applied last. Neither input is
// modified. Merge does not validate: Config.Check does.
func Merge(base, extra []Crawler, categories map[string]Category) []Crawler {
	out := make([]Crawler, len(base), len(base)+len(extra))
	copy(out, base)
	index := make(map[string]int, len(out))
	for i, c := range out {
		index[c.Name] = i
	}
	for _, e := range extra {
		e.Name = strings.ToLower(e.Name)
		i, ok := index[e.Name]
		if !ok {
			index[e.Name] = len(out)
			out = append(out, e)
			continue
		}
		c := out[i]
		if len(e.Tokens) > 0 {
			c.Tokens = e.Tokens
		}
		if e.Category != "" {
			c.Category = e.Category
		}
		if e.RangesURL != "" {
			c.RangesURL = e.RangesURL
		}
		if e.RangesFormat != "" {
			c.RangesFormat = e.RangesFormat
		}
		if len(e.Domains) > 0 {
			c.Domains = e.Domains
		}
		if e.SignatureAgent != "" {
			c.SignatureAgent = e.SignatureAgent
		}
		if e.Operator != "" {
			c.Operator = e.Operator
		}
		if e.Source != "" {
			c.Source = e.Source
		}
		out[i] = c
	}
	for name, cat := range categories {
		if i, ok := index[strings.ToLower(name)]; ok {
			out[i].Category = cat
		}
	}
	return out
}

const (
	srcGoogle     = "https://developers.google.com/crawling/docs/crawlers-fetchers/verify-google-requests"
	srcOpenAI     = "https://developers.openai.com/api/docs/bots"
	srcBing       = "https://www.bing.com/webmasters/help/how-to-verify-bingbot-3905dc26"
	srcApple      = "https://support.apple.com/en-us/119829"
	srcPerplexity = "https://docs.perplexity.ai/docs/resources/perplexity-crawlers"
	srcAnthropic  = "https://support.claude.com/en/articles/8896518"
	googleRanges  = "https://developers.google.com/static/search/apis/ipranges/"
)

// builtin is the directory. Keep docs/bots.md's table in step with it
// (TestDocsListEveryCrawler).
var builtin = []Crawler{
	// search
	{Name: "googlebot", Tokens: []string{"Googlebot", "Googlebot-Image", "Googlebot-Video", "Googlebot-News", "Storebot-Google", "Google-InspectionTool", "GoogleOther", "GoogleOther-Image", "GoogleOther-Video"}, Category: Search, RangesURL: googleRanges + "googlebot.json", Domains: []string{"googlebot.com", "google.com"}, Operator: "Google", Source: srcGoogle},
	{Name: "google-special", Tokens: []string{"AdsBot-Google", "AdsBot-Google-Mobile", "Mediapartners-Google", "APIs-Google", "Google-Safety"}, Category: Search, RangesURL: googleRanges + "special-crawlers.json", Domains: []string{"google.com"}, Operator: "Google", Source: srcGoogle},
	{Name: "bingbot", Tokens: []string{"bingbot", "adidxbot", "BingPreview", "MicrosoftPreview"}, Category: Search, RangesURL: "https://www.bing.com/toolbox/bingbot.json", Domains: []string{"search.msn.com"}, Operator: "Microsoft", Source: srcBing},
	{Name: "applebot", Tokens: []string{"Applebot"}, Category: Search, RangesURL: "https://search.developer.apple.com/applebot.json", Domains: []string{"applebot.apple.com"}, Operator: "Apple", Source: srcApple},
	{Name: "duckduckbot", Tokens: []string{"DuckDuckBot", "DuckDuckBot-Https"}, Category: Search, Operator: "DuckDuckGo", Source: "https://duckduckgo.com/duckduckgo-help-pages/results/duckduckbot"},
	{Name: "yandexbot", Tokens: []string{"YandexBot", "YandexImages", "YandexMobileBot"}, Category: Search, Domains: []string{"yandex.ru", "yandex.net", "yandex.com"}, Operator: "Yandex", Source: "https://yandex.com/support/webmaster/robot-workings/check-yandex-robots.html"},
	{Name: "baiduspider", Tokens: []string{"Baiduspider", "Baiduspider-image"}, Category: Search, Domains: []string{"baidu.com", "baidu.jp"}, Operator: "Baidu", Source: "https://help.baidu.com/question?prod_id=99&class=476&id=2996"},
	{Name: "seznambot", Tokens: []string{"SeznamBot"}, Category: Search, Domains: []string{"seznam.cz"}, Operator: "Seznam.cz", Source: "https://o-seznam.cz/napoveda/vyhledavani/en/seznambot-crawler/"},
	{Name: "petalbot", Tokens: []string{"PetalBot"}, Category: Search, Domains: []string{"petalsearch.com"}, Operator: "Huawei", Source: "https://webmaster.petalsearch.com/site/petalbot"},
	{Name: "mojeekbot", Tokens: []string{"MojeekBot"}, Category: Search, Domains: []string{"mojeek.com"}, Operator: "Mojeek", Source: "https://www.mojeek.com/bot.html"},
	{Name: "qwantbot", Tokens: []string{"Qwantbot", "Qwantify"}, Category: Search, Domains: []string{"qwant.com"}, Operator: "Qwant", Source: "https://help.qwant.com/bot/"},
	// ai-training
	{Name: "gptbot", Tokens: []string{"GPTBot"}, Category: AITraining, RangesURL: "https://openai.com/gptbot.json", Operator: "OpenAI", Source: srcOpenAI},
	{Name: "claudebot", Tokens: []string{"ClaudeBot"}, Category: AITraining, Operator: "Anthropic", Source: srcAnthropic},
	{Name: "ccbot", Tokens: []string{"CCBot"}, Category: AITraining, RangesURL: "https://index.commoncrawl.org/ccbot.json", Domains: []string{"crawl.commoncrawl.org"}, Operator: "Common Crawl Foundation", Source: "https://commoncrawl.org/ccbot"},
	{Name: "bytespider", Tokens: []string{"Bytespider"}, Category: AITraining, Operator: "ByteDance", Source: "https://darkvisitors.com/agents/bytespider"},
	{Name: "meta-externalagent", Tokens: []string{"meta-externalagent"}, Category: AITraining, Operator: "Meta", Source: "https://developers.facebook.com/docs/sharing/webmasters/web-crawlers/"},
	{Name: "amazonbot", Tokens: []string{"Amazonbot"}, Category: AITraining, Domains: []string{"crawl.amazonbot.amazon"}, Operator: "Amazon", Source: "https://developer.amazon.com/support/amazonbot"},
	{Name: "cohere-ai", Tokens: []string{"cohere-ai", "cohere-training-data-crawler"}, Category: AITraining, Operator: "Cohere", Source: "https://darkvisitors.com/agents/cohere-training-data-crawler"},
	{Name: "diffbot", Tokens: []string{"Diffbot"}, Category: AITraining, Operator: "Diffbot", Source: "https://docs.diffbot.com/docs/why-is-my-website-being-crawled-by-diffbot"},
	// ai-search
	{Name: "oai-searchbot", Tokens: []string{"OAI-SearchBot"}, Category: AISearch, RangesURL: "https://openai.com/searchbot.json", Operator: "OpenAI", Source: srcOpenAI},
	{Name: "claude-searchbot", Tokens: []string{"Claude-SearchBot"}, Category: AISearch, Operator: "Anthropic", Source: srcAnthropic},
	{Name: "perplexitybot", Tokens: []string{"PerplexityBot"}, Category: AISearch, RangesURL: "https://www.perplexity.ai/perplexitybot.json", Operator: "Perplexity", Source: srcPerplexity},
	{Name: "duckassistbot", Tokens: []string{"DuckAssistBot"}, Category: AISearch, Operator: "DuckDuckGo", Source: "https://duckduckgo.com/duckduckgo-help-pages/results/duckassistbot"},
	{Name: "amzn-searchbot", Tokens: []string{"Amzn-SearchBot"}, Category: AISearch, Operator: "Amazon", Source: "https://developer.amazon.com/amazonbot"},
	{Name: "youbot", Tokens: []string{"YouBot"}, Category: AISearch, Operator: "You.com", Source: "https://about.you.com/youbot/"},
	// ai-assistant
	{Name: "chatgpt-user", Tokens: []string{"ChatGPT-User"}, Category: AIAssistant, RangesURL: "https://openai.com/chatgpt-user.json", SignatureAgent: "https://chatgpt.com", Operator: "OpenAI", Source: srcOpenAI},
	{Name: "claude-user", Tokens: []string{"Claude-User"}, Category: AIAssistant, Operator: "Anthropic", Source: srcAnthropic},
	{Name: "perplexity-user", Tokens: []string{"Perplexity-User"}, Category: AIAssistant, RangesURL: "https://www.perplexity.ai/perplexity-user.json", Operator: "Perplexity", Source: srcPerplexity},
	{Name: "amzn-user", Tokens: []string{"AMZN-User"}, Category: AIAssistant, Operator: "Amazon", Source: "https://developer.amazon.com/amazonbot"},
	{Name: "meta-externalfetcher", Tokens: []string{"meta-externalfetcher"}, Category: AIAssistant, Operator: "Meta", Source: "https://developers.facebook.com/docs/sharing/webmasters/web-crawlers/"},
	{Name: "google-user", Tokens: []string{"Google-Read-Aloud", "FeedFetcher-Google", "Google-Site-Verification", "GoogleProducer"}, Category: AIAssistant, RangesURL: googleRanges + "user-triggered-fetchers.json", Domains: []string{"google.com", "googleusercontent.com"}, Operator: "Google", Source: srcGoogle},
	// preview
	{Name: "facebookexternalhit", Tokens: []string{"facebookexternalhit", "facebookcatalog"}, Category: Preview, Operator: "Meta", Source: "https://developers.facebook.com/docs/sharing/webmasters/web-crawlers/"},
	{Name: "twitterbot", Tokens: []string{"Twitterbot"}, Category: Preview, Operator: "X", Source: "https://developer.x.com/en/docs/x-for-websites/cards/guides/getting-started"},
	{Name: "linkedinbot", Tokens: []string{"LinkedInBot"}, Category: Preview, Operator: "LinkedIn", Source: "https://www.linkedin.com/help/linkedin/answer/a521928"},
	{Name: "slackbot", Tokens: []string{"Slackbot", "Slackbot-LinkExpanding", "Slack-ImgProxy"}, Category: Preview, Operator: "Slack", Source: "https://api.slack.com/robots"},
	{Name: "discordbot", Tokens: []string{"Discordbot"}, Category: Preview, Operator: "Discord", Source: "https://discord.com/developers/docs/resources/message#embed-object"},
	{Name: "telegrambot", Tokens: []string{"TelegramBot"}, Category: Preview, Operator: "Telegram", Source: "https://core.telegram.org/bots/webapps"},
	{Name: "whatsapp", Tokens: []string{"WhatsApp"}, Category: Preview, Operator: "Meta", Source: "https://developers.facebook.com/docs/whatsapp/link-previews"},
	{Name: "pinterestbot", Tokens: []string{"Pinterestbot", "Pinterest"}, Category: Preview, Domains: []string{"pinterest.com"}, Operator: "Pinterest", Source: "https://help.pinterest.com/en/business/article/pinterest-crawler"},
	// seo-tool
	{Name: "ahrefsbot", Tokens: []string{"AhrefsBot", "AhrefsSiteAudit"}, Category: SEOTool, Domains: []string{"ahrefs.com", "ahrefs.net"}, Operator: "Ahrefs", Source: "https://ahrefs.com/robot"},
	{Name: "semrushbot", Tokens: []string{"SemrushBot", "SiteAuditBot", "SemrushBot-BA", "SemrushBot-SI"}, Category: SEOTool, Domains: []string{"semrush.com"}, Operator: "Semrush", Source: "https://www.semrush.com/bot/"},
	{Name: "mj12bot", Tokens: []string{"MJ12bot"}, Category: SEOTool, Operator: "Majestic", Source: "https://mj12bot.com/"},
	{Name: "dotbot", Tokens: []string{"DotBot"}, Category: SEOTool, Operator: "Moz", Source: "https://moz.com/help/moz-procedures/crawlers/dotbot"},
	{Name: "blexbot", Tokens: []string{"BLEXBot"}, Category: SEOTool, Operator: "WebMeUp", Source: "http://webmeup-crawler.com/"},
	// monitor
	{Name: "uptimerobot", Tokens: []string{"UptimeRobot"}, Category: Monitor, Operator: "UptimeRobot", Source: "https://uptimerobot.com/help/locations/"},
	{Name: "pingdom", Tokens: []string{"Pingdom"}, Category: Monitor, Operator: "SolarWinds", Source: "https://www.pingdom.com/rss/probe_servers.xml"},
	{Name: "google-pagespeed", Tokens: []string{"Chrome-Lighthouse", "Google-PageSpeed"}, Category: Monitor, Operator: "Google", Source: "https://developers.google.com/speed/docs/insights/v5/about"},
}
