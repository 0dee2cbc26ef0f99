// Package jinja renders HuggingFace chat templates exactly as
// transformers' apply_chat_template(..., tokenize=False) does: Jinja2 3.1
// semantics in the environment transformers compiles templates with
// (transformers/utils/chat_template_utils.py): an
// ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the
// loopcontrols extension, transformers' own tojson filter, the globals
// raise_exception and strftime_now, and the {% generation %} tag. It is
// pure Go, with the standard library only.
//
//	t, err := jinja.Parse("tokenizer_config.json", chatTemplate)
//	msgs, err := jinja.DecodeJSON(messagesJSON) // keeps key order for tojson
//	text, err := t.Render(jinja.ChatVars(msgs, nil, true, map[string]any{"bos_token": "<s>"}))
//
// Templates are lexed, parsed into a syntax tree once, and evaluated by a
// tree walker; a Template is safe for concurrent renders.
//
// # Values
//
// Values behave as Python's: ints (64-bit here: a result that overflows is
// an error), floats, str (indexed by code point), bool, None, list, tuple,
// dict (insertion-ordered: see Dict and DecodeJSON), and Jinja's Undefined,
// which prints as "", is false and empty, and fails on any other use
// ("'x' is undefined", "'dict object' has no attribute 'y'"). {{ v }}
// prints Python's str(v): True, None, 1.0, 1e-05, ['a', 1], {'k': 'v'}.
// Filters that are generators in Jinja (select, map, ...) return one-shot
// iterators that are always true and have no length.
//
// # The subset
//
// Syntax: text, {{ }}, {% %}, {# #}, whitespace control with "-" and "+",
// {% raw %}, and trim_blocks / lstrip_blocks as transformers sets them.
//
// Statements: if/elif/else, for (with tuple targets, an inline "if"
// filter, else, and loop.index, index0, revindex, revindex0, first, last,
// length, previtem, nextitem, depth, cycle(), changed()), break,
// continue, set (names, tuples, namespace attributes, and block set with
// filters), macro (defaults, varargs, kwargs, caller), call, filter,
// with, print and generation (which renders its body). Jinja's scoping
// holds: a set inside a loop or macro does not leak (hence namespace()),
// and a name first set unconditionally in a frame starts that frame unset
// (see symbols.go).
//
// Expressions: literals (strings with Python escapes, ints in any base,
// floats, true/True/false/False/none/None, lists, tuples, dicts), names,
// a.b and a['b'] (attribute then item as the sandbox does), indexes and
// slices, + - * / // % ** (Python semantics, str % formatting), ~, unary
// - + not, comparisons (chained), in, not in, and/or returning an operand,
// x if c else y, filters, tests and calls.
//
// Tests: defined, undefined, none, boolean, true, false, integer, float,
// number, string, mapping, iterable, sequence, callable, odd, even,
// divisibleby, lower, upper, escaped, sameas, in, filter, test, and the
// comparisons eq/equalto/==, ne/!=, gt/greaterthan/>, ge/>=, lt/lessthan/<,
// le/<=.
//
// Filters: abs, attr, batch, capitalize, center, count, d/default,
// dictsort, e/escape, first, float, forceescape, format, indent, int,
// items, join, last, length, list, lower, map, max, min, reject,
// rejectattr, replace, reverse, round, safe, select, selectattr, sort,
// string, sum, title, tojson (transformers': json.dumps with
// ensure_ascii=False and its indent, separators and sort_keys), trim,
// unique, upper, wordcount. Autoescape is off, as in transformers, but
// escape and safe still make Markup, which escapes plain strings added to
// it.
//
// Methods the immutable sandbox allows: the str methods (strip, lstrip,
// rstrip, split, rsplit, splitlines, startswith, endswith, upper, lower,
// title, capitalize, swapcase, replace, join, find, rfind, index, rindex,
// count, format, removeprefix, removesuffix, partition, rpartition,
// center, ljust, rjust, zfill, is*), dict items, keys, values, get and
// copy, list and tuple count and index. Methods that mutate a list or dict
// (append, pop, update, ...) are the sandbox's SecurityError, as in
// transformers.
//
// Globals: range (at most 100000 items, as the sandbox), dict, namespace,
// raise_exception(msg) (the render fails with an *Error whose Raised is
// set and whose Msg is msg) and strftime_now(format) (Python's directives
// %a %A %b %B %c %d %D %e %f %F %H %I %j %m %M %p %R %S %T %u %w %x %X %y
// %Y %%, on Options.Now). Callers add functions with Func values.
//
// # Refused
//
// Outside the subset, Parse (or Render, where only the values show it)
// fails with one sentence naming the template, the line and the
// construct:
//
//	chat template tokenizer_config.json: line 3: the {% extends %} statement is not supported
//	chat template tokenizer_config.json: line 7: the filter "wordwrap" is not supported
//
// Refused are the statements extends, block, include, import, from,
// autoescape, do and trans; recursive for loops; *args and **kwargs in
// calls; the filters filesizeformat, groupby, pprint, random, slice,
// striptags, truncate, urlencode, urlize, wordwrap and xmlattr; the
// globals lipsum, cycler and joiner; str methods such as encode,
// expandtabs, translate and format_map; iterating over the loop variable;
// strftime directives outside the list above; integers beyond 64 bits.
//
// # Known differences
//
// Beyond the refusals: Go's simple Unicode case mapping (and Go's Unicode
// tables), with Python's full mappings for ß, ŉ, ǰ, ΐ, ΰ, և, the Latin
// ligatures and İ, and its final sigma; complex
// results of ** on negative floats are errors; generators run eagerly, so
// an error inside map or select surfaces when the filter runs rather than
// when its result is consumed; syntax errors are this package's sentences, not
// Jinja's; Jinja's compile-time folding of constant expressions in {{ }}
// (such as {{ 1[1:] }}) is not reproduced, except for the dict literals of
// constants with unhashable keys that fail to compile.
//
// # Bounds
//
// Options.MaxOutput bounds the output and every string and list built on
// the way; Options.MaxSteps bounds loop iterations and macro calls; macro
// calls nest at most 100 deep and the template at most 300 levels. Hitting
// a bound is an error that names it.
package jinja
