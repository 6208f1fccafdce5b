package rules

// AITrainingAgents is what "@ai-training" expands to in a [[robots.group]]:
// the robots.txt user-agent tokens whose operators document them as
// collecting content to train AI models (not search indexing, and not
// fetches a user asks for). This is the one place in the code that lists
// them; docs/crawlers.md names each entry's operator, the page that
// documents its token, and the date it was checked. Change an entry only
// together with that table. Each call returns a new slice, the caller's to
// keep or change.
func AITrainingAgents() []string {
	return []string{
		"GPTBot",             // OpenAI
		"ClaudeBot",          // Anthropic
		"Google-Extended",    // Google: a control token, no crawler of its own
		"Applebot-Extended",  // Apple: a control token, no crawler of its own
		"CCBot",              // Common Crawl
		"meta-externalagent", // Meta
		"Amazonbot",          // Amazon
	}
}

// aiTrainingList is the name of the list in user_agents.
const aiTrainingList = "@ai-training"
