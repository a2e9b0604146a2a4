module github.com/berthhq/berth/services/tenant

go 1.26.0
