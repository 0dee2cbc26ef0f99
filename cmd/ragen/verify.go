package main

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/ragen-go/ragen/internal/manifest"
)

// skipVerifyHelp is the --skip-verify flag's help.
const skipVerifyHelp = "load the model even if its files do not match the manifest.json of its folder (a corrupt or changed file)"

// addSkipVerify adds --skip-verify to the commands that load a folder ragen
// wrote.
func addSkipVerify(fs *pflag.FlagSet) *bool { return fs.Bool("skip-verify", false, skipVerifyHelp) }

// verifyModel checks a --model folder that ragen wrote (one with a
// manifest.json, such as a run's export/) against its manifest before it
// is loaded, unless skip. A folder without one (a HuggingFace download)
// and a GGUF file are loaded as they are.
func verifyModel(path string, skip bool) error {
	if st, err := os.Stat(path); skip || err != nil || !st.IsDir() {
		return nil
	}
	_, err := manifest.Verify(path)
	return err
}
