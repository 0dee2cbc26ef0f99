package jinja_test

import (
	"fmt"

	"github.com/ragen-go/ragen/tokenizer/jinja"
)

func ExampleTemplate_Render() {
	t, err := jinja.Parse("example", "{% for m in messages %}<|{{ m.role }}|>{{ m.content | trim }}\n{% endfor %}"+
		"{% if add_generation_prompt %}<|assistant|>{% endif %}")
	if err != nil {
		panic(err)
	}
	msgs, err := jinja.DecodeJSON([]byte(`[{"role": "user", "content": " Left or Up? "}]`))
	if err != nil {
		panic(err)
	}
	out, err := t.Render(jinja.ChatVars(msgs, nil, true, nil))
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output:
	// <|user|>Left or Up?
	// <|assistant|>
}

func ExampleParse_refused() {
	_, err := jinja.Parse("tokenizer_config.json", "{{ bos_token }}\n{{ text | wordwrap(80) }}")
	fmt.Println(err)
	// Output:
	// chat template tokenizer_config.json: line 2: the filter "wordwrap" is not supported
}

func ExampleFunc() {
	t, _ := jinja.Parse("example", "{{ shout('hi') }} {{ raise_exception('no tools') if tools }}")
	shout := jinja.Func(func(args []any, _ map[string]any) (any, error) {
		return fmt.Sprint(args[0], "!"), nil
	})
	out, err := t.Render(map[string]any{"shout": shout, "tools": nil})
	fmt.Printf("%q %v\n", out, err)
	_, err = t.Render(map[string]any{"shout": shout, "tools": []any{"x"}})
	fmt.Println(err)
	// Output:
	// "hi! " <nil>
	// chat template example: line 1: no tools
}
