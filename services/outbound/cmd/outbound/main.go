package main

import (
	"github.com/berthhq/berth/pkg/svcmain"
	"github.com/berthhq/berth/services/outbound/server"
)

func main() { svcmain.Main(server.Module) }
