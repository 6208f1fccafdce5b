package schema

import "strings"

// Join is the key path of key in the table at path, as Problem.Key spells
// it: "rule[3]" and "open_graph" make "rule[3].open_graph".
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Suggest returns the known key closest to k, if it is close enough.
func Suggest(k string, keys []string) string {
	best, bestD := "", 1<<30
	for _, c := range keys {
		if d := editDistance(strings.ToLower(k), c); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(2, len(k)/3) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
