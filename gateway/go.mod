module github.com/berthhq/berth/gateway

go 1.26.0

replace (
	github.com/berthhq/berth/pkg => ../pkg
	github.com/berthhq/berth/proto => ../proto
	github.com/berthhq/berth/services/identity => ../services/identity
	github.com/berthhq/berth/services/tenant => ../services/tenant
)

require (
	github.com/berthhq/berth/pkg v0.0.0-00010101000000-000000000000
	github.com/berthhq/berth/proto v0.0.0-00010101000000-000000000000
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.32.0
	google.golang.org/genproto/googleapis/api v0.0.0-20261012220534-4341edf3f941
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require (
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
)
