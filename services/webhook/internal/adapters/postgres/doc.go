// Package postgres is the webhook store on PostgreSQL (pgx), with its embedded migrations.
package postgres
