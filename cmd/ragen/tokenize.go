package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ragen-go/ragen/tokenizer"
)

func init() {
	register(command{name: "tokenize", summary: "encode JSON strings to token ids, or decode ids, one per line", run: runTokenize})
}

// stdinReader is where tokenize reads its lines from; tests replace it.
var stdinReader io.Reader = os.Stdin

func runTokenize(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", stderr)
	path := fs.String("tokenizer", "", "tokenizer.json, the checkpoint folder that holds it (with tokenizer_config.json), a .gguf file, or smollm2")
	decode := fs.Bool("decode", false, "read JSON arrays of token ids and print JSON strings")
	skipSpecial := fs.Bool("skip-special", false, "with --decode, leave out special tokens (<|im_end|>, <|endoftext|>, ...)")
	chat := fs.Bool("chat", false, `read JSON arrays of messages [{"role","content"}] and print {"text","ids"}: their rendering with Qwen2.5's chat template`)
	genPrompt := fs.Bool("generation-prompt", true, "with --chat, end the rendering with the assistant's generation prompt (=false: a finished conversation)")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if *path == "" {
		return errors.New("--tokenizer is required: a tokenizer.json file or a checkpoint folder")
	}
	if *skipSpecial && !*decode {
		return errors.New("--skip-special only applies with --decode")
	}
	if *chat && *decode {
		return errors.New("--chat encodes conversations; it does not combine with --decode")
	}
	if fs.Changed("generation-prompt") && !*chat {
		return errors.New("--generation-prompt only applies with --chat")
	}
	mode := encodeText
	switch {
	case *decode:
		mode = decodeIDs
	case *chat:
		mode = encodeChat
	}
	if km, ok := knownModels[*path]; ok {
		if _, err := os.Stat(*path); err != nil {
			if *path, err = findKnown("--tokenizer", *path, km); err != nil {
				return err
			}
		}
	}
	tk, err := tokenizer.Load(*path)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(stdout)
	err = tokenizeLines(tk, stdinReader, out, lineMode{mode, *skipSpecial, *genPrompt})
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// What tokenizeLines reads from each line.
const (
	encodeText = iota // a JSON string → its ids
	decodeIDs         // a JSON array of ids → the text
	encodeChat        // a JSON array of messages → their chat rendering, text and ids
)

// chatOutput is what --chat prints per conversation. Both are given: the
// ids do not always decode to the text, as the tokenizer normalises it
// (NFC) before splitting.
type chatOutput struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

// lineMode is what tokenizeLines does to each line.
type lineMode struct {
	kind        int  // encodeText, decodeIDs or encodeChat
	skipSpecial bool // decodeIDs: leave out special tokens
	genPrompt   bool // encodeChat: end with the generation prompt
}

// tokenizeLines converts each input line: a JSON string to a JSON array of
// ids, the reverse, or a conversation to its chat rendering.
// Output lines match input lines one to one; the first bad line stops it
// with an error naming the line.
func tokenizeLines(tk *tokenizer.Tokenizer, in io.Reader, out io.Writer, mode lineMode) error {
	r := bufio.NewReaderSize(in, 1<<16)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // keep <|im_end|> readable
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("reading standard input: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			return fmt.Errorf("line %d is empty; each line must be one JSON value", n)
		}
		switch mode.kind {
		case decodeIDs:
			var ids []int
			if uerr := json.Unmarshal(line, &ids); uerr != nil {
				return fmt.Errorf("line %d: want a JSON array of token ids: %v", n, uerr)
			}
			text, derr := tk.Decode(ids)
			if mode.skipSpecial {
				text, derr = tk.DecodeSkipSpecial(ids)
			}
			if derr != nil {
				return fmt.Errorf("line %d: %w", n, derr)
			}
			if werr := enc.Encode(text); werr != nil {
				return werr
			}
		case encodeChat:
			var msgs []tokenizer.Message
			if uerr := json.Unmarshal(line, &msgs); uerr != nil {
				return fmt.Errorf("line %d: want a JSON array of messages {\"role\", \"content\"}: %v", n, uerr)
			}
			text, rerr := tk.RenderChat(msgs, mode.genPrompt)
			if rerr != nil {
				return fmt.Errorf("line %d: %w", n, rerr)
			}
			if werr := enc.Encode(chatOutput{text, tk.Encode(text)}); werr != nil {
				return werr
			}
		default:
			var text string
			if uerr := json.Unmarshal(line, &text); uerr != nil {
				return fmt.Errorf("line %d: want a JSON string: %v", n, uerr)
			}
			if werr := enc.Encode(tk.Encode(text)); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}
