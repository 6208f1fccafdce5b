package schema

import (
	"fmt"
	"slices"
	"testing"
)

type reports []string

func (r *reports) Add(code, key, format string, args ...any) {
	*r = append(*r, code+" "+key+": "+fmt.Sprintf(format, args...))
}

// Decode reads early fields first, in declaration order, then the rest in
// key order, and reports unknown keys (with a did-you-mean) before
// anything and missing required keys after.
func TestDecode(t *testing.T) {
	var read []string
	rd := func(_ *int, key string, v any) { read = append(read, fmt.Sprint(key, "=", v)) }
	fs := &Fields[*int]{Name: "t", List: []Field[*int]{
		{Key: "b", Read: rd},
		{Key: "z", Early: true, Read: rd},
		{Key: "a", Read: rd},
		{Key: "need", Read: rd, NeedCode: "HG102", Need: "is required", NeedKey: true},
		{Key: "env", Env: "HEADGATE_ENV"},
	}}
	ks := NewKeys(fs)
	var r reports
	Decode(&r, ks, "t", map[string]any{"a": 1, "b": 2, "z": 3, "nede": 4}, fs, new(int))
	if want := []string{"t.z=3", "t.a=1", "t.b=2"}; !slices.Equal(read, want) {
		t.Errorf("read %q, want %q", read, want)
	}
	if want := []string{"HG140 t.nede: unknown key (did you mean need?)", "HG102 t.need: is required"}; !slices.Equal(r, want) {
		t.Errorf("reports %q, want %q", r, want)
	}
	if want := []EnvKey{{"HEADGATE_ENV", "t.env"}}; !slices.Equal(ks.Env, want) || !slices.Equal(ks.Tables[""], []string{"t"}) {
		t.Errorf("Env %v, Tables %v", ks.Env, ks.Tables)
	}
}
