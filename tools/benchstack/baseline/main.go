package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	if err := run(); err != nil {
		log.Fatalf("baseline: %v", err)
	}
}

type server struct {
	identity, tenant *pgxpool.Pool
	appID            string
	readKey          []byte
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := func(name string) (string, error) {
		v := os.Getenv(name)
		if v == "" {
			return "", fmt.Errorf("%s is not set", name)
		}
		return v, nil
	}
	var vals [5]string
	for i, name := range []string{"BASELINE_ADDR", "BASELINE_IDENTITY_DATABASE_URL", "BASELINE_TENANT_DATABASE_URL", "BASELINE_APP_ID", "BASELINE_READ_KEY"} {
		v, err := env(name)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	// Default pool sizes, like the stack's services (pgxx.Open), so neither side gets more
	// database connections than the other.
	identity, err := pgxpool.New(ctx, vals[1])
	if err != nil {
		return err
	}
	defer identity.Close()
	tenant, err := pgxpool.New(ctx, vals[2])
	if err != nil {
		return err
	}
	defer tenant.Close()
	for _, p := range []*pgxpool.Pool{identity, tenant} {
		if err := p.Ping(ctx); err != nil {
			return err
		}
	}
	s := &server{identity: identity, tenant: tenant, appID: vals[3], readKey: []byte(vals[4])}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/users/{userId}", s.user)
	mux.HandleFunc("GET /v1/tenants/{tenantId}", s.tenantRead)
	srv := &http.Server{Addr: vals[0], Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// authorized is the cheapest honest API-key check: the presented key equals the one read key the
// process knows (constant time), the claimed type is read, and the client id is the key's app.
// The stack instead verifies an HMAC of the secret against identity's table (cached by other
// services); the difference is part of what the benchmark measures.
func (s *server) authorized(r *http.Request) bool {
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("X-API-KEY")), s.readKey) == 1 &&
		r.Header.Get("X-API-KEY-TYPE") == "read" && r.Header.Get("X-CLIENT-ID") == s.appID
}

// envelope is the /v1 success and error shape the edge renders.
type envelope struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Error   any    `json:"error"`
	Data    any    `json:"data"`
}

func reply(w http.ResponseWriter, status int, e envelope) {
	b, err := json.Marshal(e)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func fail(w http.ResponseWriter, status int, msg string) {
	reply(w, status, envelope{Message: msg, Error: map[string]any{"code": status, "message": msg}})
}

func (s *server) user(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		fail(w, http.StatusUnauthorized, "unauthorized")
		return
	}
	// Route 14 takes a UUID or an email.
	id, where := r.PathValue("userId"), "id = $2::uuid"
	if strings.Contains(id, "@") {
		where = "lower(email) = lower($2)"
	}
	var u user
	err := s.identity.QueryRow(r.Context(), "select "+userColumns+" from users where app_id = $1 and "+where, s.appID, id).Scan(u.fields()...)
	if errors.Is(err, pgx.ErrNoRows) {
		fail(w, http.StatusBadRequest, "user not found")
		return
	}
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	u.Kind = "user"
	reply(w, http.StatusOK, envelope{Success: true, Message: "User retrieved", Data: &u})
}

// tenantRead answers route 5 as its body needs: the tenant with its addresses from the tenant
// database, then the tenant's users from the identity database (the stack asks identity for them
// over gRPC).
func (s *server) tenantRead(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		fail(w, http.StatusUnauthorized, "unauthorized")
		return
	}
	id := r.PathValue("tenantId")
	rows, err := s.tenant.Query(r.Context(), "select "+tenantColumns+", "+addressColumns+
		" from tenants t left join tenant_addresses a on a.tenant_id = t.id where t.id = $1::uuid and t.app_id = $2", id, s.appID)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	var t tenant
	found := false
	for rows.Next() {
		var a address
		if err := rows.Scan(append(t.fields(), a.fields()...)...); err != nil {
			rows.Close()
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		found = true
		switch a.Type.String {
		case "shipping":
			t.Shipping = &a
		case "billing":
			t.Billing = &a
		}
	}
	if err := rows.Err(); err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !found {
		fail(w, http.StatusBadRequest, "tenant not found")
		return
	}
	urows, err := s.identity.Query(r.Context(), "select "+userColumns+" from users where app_id = $1 and tenant_id = $2 and not deleted order by created_at", s.appID, id)
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	t.Users = []user{}
	for urows.Next() {
		var u user
		if err := urows.Scan(u.fields()...); err != nil {
			urows.Close()
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		t.Users = append(t.Users, u)
	}
	if err := urows.Err(); err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	t.Kind = "tenant"
	reply(w, http.StatusOK, envelope{Success: true, Message: "Tenant retrieved", Data: &t})
}
