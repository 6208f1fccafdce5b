package pattern_test

import (
	"fmt"

	"github.com/headgate/headgate/rules/pattern"
)

func ExampleParse() {
	p, err := pattern.Parse("/wiki/:title{.+}", nil)
	if err != nil {
		panic(err)
	}
	path, err := p.Fill(map[string]string{"title": "Tea (drink)/Green"})
	fmt.Println(path, err)
	params, ok := p.Bind(path)
	fmt.Println(params["title"], ok)
	fmt.Println(pattern.CheckPath("/a/%2e%2E/b") != nil, pattern.EscapePath("/caf\xc3\xa9/%e6"))
	// Output:
	// /wiki/Tea%20(drink)/Green <nil>
	// Tea (drink)/Green true
	// true /caf%C3%A9/%E6
}
