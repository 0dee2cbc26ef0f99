package model

import (
	"testing"

	"github.com/ragen-go/ragen/internal/torchrt/torchtest"
)

func TestMain(m *testing.M) { torchtest.Main(m) }
