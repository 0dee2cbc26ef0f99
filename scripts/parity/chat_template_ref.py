"""transformers' chat-template rendering as the reference for ragen-go's
tokenizer/jinja (parity/chattemplate_test.go, and the jinja package's own
cross-check of its unit cases).

Usage: chat_template_ref.py < REQUEST.json > ANSWER.json

The request is JSON:

  {"template": str,
   "conversations": [{"messages": [...], "add_generation_prompt": bool,
                      "tools": [...] or absent, "vars": {...} or absent}],
   "cases": [{"template": str, "vars": {...}}],
   "now": "2024-09-05T13:04:05" or absent}

Each conversation is rendered by render_jinja_template, the function that
tokenizer.apply_chat_template(messages, tools=..., tokenize=False,
add_generation_prompt=..., **vars) calls with the tokenizer's special tokens
merged into vars (pass them in vars: bos_token, eos_token, ...). Each case is
rendered by template.render(**vars) in the environment transformers compiles
templates with (_compile_jinja_template: ImmutableSandboxedEnvironment,
trim_blocks, lstrip_blocks, loopcontrols, its tojson, raise_exception and
strftime_now). "now" freezes the clock of strftime_now.

The answer is {"conversations": [...], "cases": [...]}, one entry per input:
{"text": str} or, when rendering raised, {"error": str(exception), "type":
its class name}. Object keys keep their JSON order, as json.load gives them.
"""

import datetime as _dt
import json
import sys

from transformers.utils import chat_template_utils as ctu


def freeze_clock(iso):
    """Make strftime_now see a fixed time: transformers' strftime_now calls
    datetime.now() through the module's global name."""
    fixed = _dt.datetime.fromisoformat(iso)

    class Frozen(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed

    ctu.datetime = Frozen


def outcome(render):
    try:
        return {"text": render()}
    except Exception as e:  # the template's own raise_exception, or any failure
        return {"error": str(e), "type": type(e).__name__}


def main():
    req = json.load(sys.stdin)
    if req.get("now"):
        freeze_clock(req["now"])
    template = req.get("template")
    convs = []
    for c in req.get("conversations", []):
        def render(c=c):
            rendered, _ = ctu.render_jinja_template(
                conversations=[c["messages"]],
                tools=c.get("tools"),
                chat_template=template,
                add_generation_prompt=c.get("add_generation_prompt") or False,
                **(c.get("vars") or {}),
            )
            return rendered[0]

        convs.append(outcome(render))
    cases = []
    for c in req.get("cases", []):
        def render(c=c):
            return ctu._compile_jinja_template(c["template"]).render(**(c.get("vars") or {}))

        cases.append(outcome(render))
    json.dump({"conversations": convs, "cases": cases}, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
