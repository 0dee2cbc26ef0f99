module github.com/ragen-go/ragen

go 1.26.8

require (
	github.com/dlclark/regexp2 v1.10.0
	github.com/pkoukk/tiktoken-go v0.1.7
	github.com/rs/zerolog v1.35.1
	github.com/spf13/pflag v1.1.0
	github.com/sugarme/gotch v0.9.1
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.29.0
	golang.org/x/text v0.44.0
)

require (
	github.com/google/uuid v1.3.0 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
)

// gotch is replaced by a copy prepared for the libtorch found on this machine
// (link flags, wrappers that this libtorch lacks, fixed output slots): see
// scripts/gotchprep and `make deps`.
replace github.com/sugarme/gotch => ./third_party/gotch
