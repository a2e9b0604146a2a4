module github.com/berthhq/berth/services/stack

go 1.26.0
