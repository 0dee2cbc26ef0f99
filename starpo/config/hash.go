package config

import (
	"crypto/sha256"
	"encoding/hex"

	"go.yaml.in/yaml/v3"
)

// Hash is the SHA-256 of the config as Save writes it (config.yaml), hex:
// what a checkpoint's manifest records of the run that wrote it.
func (c Config) Hash() (string, error) {
	data, err := yaml.Marshal(c)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}
