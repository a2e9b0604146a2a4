package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

func TestCreateEndpointShowsTheSecretOnceAndStoresItSealed(t *testing.T) {
	svc, store := newService(t, 1)
	ctx := context.Background()
	v, err := svc.CreateEndpoint(ctx, appID, strings.ToUpper(appID), app.EndpointInput{URL: " https://example.com/h ", Events: []string{"user.updated"}, Description: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.Secret, domain.SecretPrefix) || v.Endpoint.URL != "https://example.com/h" {
		t.Errorf("created %+v with secret %q", v.Endpoint, v.Secret)
	}
	stored, err := store.GetEndpoint(ctx, appID, v.Endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored.Secret), v.Secret) || strings.Contains(string(stored.Secret), strings.TrimPrefix(v.Secret, domain.SecretPrefix)) {
		t.Error("the store holds the plain secret")
	}
	got, err := svc.GetEndpoint(ctx, appID, appID, v.Endpoint.ID)
	if err != nil || got.ID != v.Endpoint.ID {
		t.Fatalf("read back %+v, %v", got, err)
	}
}

func TestEndpointRoutesActOnTheKeysOwnAppOnly(t *testing.T) {
	svc, _ := newService(t, 1)
	ctx := context.Background()
	v, err := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: "https://example.com/h", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	other := uuid.NewString()
	if _, err := svc.CreateEndpoint(ctx, other, appID, app.EndpointInput{URL: "https://example.com/h", Events: []string{"*"}}); !fault.Is(err, fault.KindNotFound) {
		t.Errorf("another app's key created: %v", err)
	}
	if _, err := svc.GetEndpoint(ctx, other, other, v.Endpoint.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another app reads the endpoint: %v", err)
	}
	if err := svc.DeleteEndpoint(ctx, other, other, v.Endpoint.ID); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("another app deletes the endpoint: %v", err)
	}
	if _, err := svc.ListEndpoints(ctx, appID, "not-a-uuid"); !fault.Is(err, fault.KindInvalid) {
		t.Errorf("a malformed app id: %v", err)
	}
	if _, err := svc.GetEndpoint(ctx, appID, appID, "nope"); !fault.Is(err, fault.KindInvalid) {
		t.Errorf("a malformed endpoint id: %v", err)
	}
	if _, err := svc.RetryDelivery(ctx, appID, appID, v.Endpoint.ID, "nope"); !fault.Is(err, fault.KindInvalid) {
		t.Errorf("a malformed delivery id: %v", err)
	}
}

func TestUpdateEndpointValidatesEveryFieldBeforeApplyingAny(t *testing.T) {
	svc, _ := newService(t, 1)
	ctx := context.Background()
	v, _ := svc.CreateEndpoint(ctx, appID, appID, app.EndpointInput{URL: "https://example.com/h", Events: []string{"user.updated"}})
	newURL, disabled := "https://example.org/new", true
	if _, err := svc.UpdateEndpoint(ctx, appID, appID, v.Endpoint.ID, app.EndpointPatch{URL: &newURL, Events: []string{"bogus"}}); !fault.Is(err, fault.KindInvalid) {
		t.Fatalf("an unknown type was accepted: %v", err)
	}
	if e, _ := svc.GetEndpoint(ctx, appID, appID, v.Endpoint.ID); e.URL != "https://example.com/h" {
		t.Errorf("a refused patch changed the URL to %s", e.URL)
	}
	e, err := svc.UpdateEndpoint(ctx, appID, appID, v.Endpoint.ID, app.EndpointPatch{URL: &newURL, Disabled: &disabled})
	if err != nil || e.URL != newURL || !e.Disabled || e.Events[0] != "user.updated" {
		t.Errorf("updated %+v, %v", e, err)
	}
}

func TestCreateEndpointRefusesBadInputNamingTheField(t *testing.T) {
	svc, _ := newService(t, 1)
	ctx := context.Background()
	for name, in := range map[string]app.EndpointInput{
		"url":         {URL: "ftp://x", Events: []string{"*"}},
		"events":      {URL: "https://example.com", Events: []string{"user.nope"}},
		"description": {URL: "https://example.com", Events: []string{"*"}, Description: strings.Repeat("x", domain.MaxDescriptionLength+1)},
	} {
		_, err := svc.CreateEndpoint(ctx, appID, appID, in)
		if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != name {
			t.Errorf("bad %s: %v", name, err)
		}
	}
}
