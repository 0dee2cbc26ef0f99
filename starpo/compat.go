package starpo

import (
	"github.com/ragen-go/ragen/model"
	"github.com/ragen-go/ragen/starpo/config"
	"github.com/ragen-go/ragen/starpo/sft"
	"github.com/ragen-go/ragen/tokenizer"
)

// RunSFT is sft.Run under its old name, which cmd/ragen/quickstart.go
// still calls (that file is being changed elsewhere). Remove it, and this
// file, once quickstart.go calls sft.Run.
//
// Deprecated: use sft.Run.
func RunSFT(cfg config.Config, modelDir, out string, opt model.Options, stop func() bool) (sft.Result, error) {
	return sft.Run(cfg, modelDir, out, opt, stop)
}

// DomainTexts is sft.DomainTexts under its old name, for the same reason.
//
// Deprecated: use sft.DomainTexts.
func DomainTexts(cfg config.Config, tok *tokenizer.Tokenizer, perTag int) ([]string, error) {
	return sft.DomainTexts(cfg, tok, perTag)
}
