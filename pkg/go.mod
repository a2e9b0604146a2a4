module github.com/berthhq/berth/pkg

go 1.26.0

replace github.com/berthhq/berth/proto => ../proto

require (
	github.com/berthhq/berth/proto v0.0.0-00010101000000-000000000000
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261005182115-fad411399dd8
	google.golang.org/grpc v1.85.0
	google.golang.org/protobuf v1.36.12
)

require golang.org/x/sys v0.49.0 // indirect
