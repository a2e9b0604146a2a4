module github.com/berthhq/berth/services/sandbox

go 1.26.0

replace (
	github.com/berthhq/berth/pkg => ../../pkg
	github.com/berthhq/berth/proto => ../../proto
)

require github.com/berthhq/berth/pkg v0.0.0-00010101000000-000000000000
