module github.com/berthhq/berth/services/sandbox

go 1.26.0
