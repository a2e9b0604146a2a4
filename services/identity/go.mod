module github.com/berthhq/berth/services/identity

go 1.26.0
