module github.com/berthhq/berth/gateway

go 1.26.0
