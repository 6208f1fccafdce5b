package rewrite

import (
	"strings"
	"testing"
)

func TestContainsFold(t *testing.T) {
	tests := []struct {
		b    string
		want bool
	}{
		{`<script type="application/ld+json">`, true},
		{`<script type="application/LD+JSON">`, true},
		{`<script type=JsOn>`, true},
		{`<script src="a.js">`, false},
		{`<script jso jsoN>`, true},
		{`json`, true},
		{`jso`, false},
		{``, false},
		{strings.Repeat("j", 1000) + "son", true},
		{strings.Repeat("jJ", 1000), false},
	}
	for _, tc := range tests {
		if got := containsFold([]byte(tc.b), "json"); got != tc.want {
			t.Errorf("containsFold(%.40q, json) = %v, want %v", tc.b, got, tc.want)
		}
	}
}

func TestHasToken(t *testing.T) {
	tests := []struct {
		list string
		want bool
	}{
		{"canonical", true},
		{" Canonical ", true},
		{"stylesheet\tCANONICAL\n", true},
		{"canonicals", false},
		{"xcanonical", false},
		{"canonical-x canon", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := hasToken([]byte(tc.list), "canonical"); got != tc.want {
			t.Errorf("hasToken(%q, canonical) = %v, want %v", tc.list, got, tc.want)
		}
	}
}

func TestCollapseSpace(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Plain title", "Plain title"},
		{"  Padded\t", "Padded"},
		{"Two  spaces", "Two spaces"},
		{"Line\nbreak", "Line break"},
		{"\r\n\f", ""},
		{"", ""},
		{"a", "a"},
		{" a b  c ", "a b c"},
		{"non\u00a0breaking", "non\u00a0breaking"}, // not ASCII whitespace
	}
	for _, tc := range tests {
		if got := collapseSpace(tc.in); got != tc.want {
			t.Errorf("collapseSpace(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		js      string
		utf8Doc bool
		want    string
	}{
		{`{"a":"é"}`, true, `{"a":"é"}`},
		{`{"a":"é"}`, false, `{"a":"\u00e9"}`},
		{`{"a":"😀"}`, false, `{"a":"\ud83d\ude00"}`},
		{"{\"a\":\"\xff\"}", true, `{"a":"\ufffd"}`},
		{`{"a":"plain"}`, false, `{"a":"plain"}`},
	}
	for _, tc := range tests {
		if got := string(appendJSON(nil, []byte(tc.js), tc.utf8Doc)); got != tc.want {
			t.Errorf("appendJSON(%q, utf8 %v) = %q, want %q", tc.js, tc.utf8Doc, got, tc.want)
		}
	}
}
