module github.com/berthhq/berth/services/billing

go 1.26.0

replace (
	github.com/berthhq/berth/gateway => ../../gateway
	github.com/berthhq/berth/pkg => ../../pkg
	github.com/berthhq/berth/proto => ../../proto
	github.com/berthhq/berth/services/sandbox => ../../services/sandbox
)
