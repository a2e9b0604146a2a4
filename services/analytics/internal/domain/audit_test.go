package domain

import (
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

func TestAnAuditFilterRefusesBadValuesNamingTheParameter(t *testing.T) {
	actions := []string{"identity.user.updated", "tenant.tenant.updated"}
	ok := AuditQuery{From: "2026-03-01", To: "2026-03-31"}
	cases := []struct {
		name  string
		edit  func(q *AuditQuery)
		field string // "" when the filter is valid
	}{
		{"a plain range", func(*AuditQuery) {}, ""},
		{"every filter set", func(q *AuditQuery) {
			q.ActorKind, q.ActorID, q.TargetType, q.TargetID, q.Action = "api_key", "k1", "user", "u1", "identity.user.updated"
		}, ""},
		{"no from", func(q *AuditQuery) { q.From = "" }, "from"},
		{"a to before from", func(q *AuditQuery) { q.To = "2026-02-01" }, "from"},
		{"a range over a year", func(q *AuditQuery) { q.To = "2027-03-31" }, "to"},
		{"an unknown actor kind", func(q *AuditQuery) { q.ActorKind = "robot" }, "actorKind"},
		{"an unknown target type", func(q *AuditQuery) { q.TargetType = "invoice" }, "targetType"},
		{"an action that is no event type", func(q *AuditQuery) { q.Action = "user.updated" }, "action"},
		{"an actor id too long to be one", func(q *AuditQuery) { q.ActorID = strings.Repeat("a", 129) }, "actorId"},
		{"a target id too long to be one", func(q *AuditQuery) { q.TargetID = strings.Repeat("a", 129) }, "targetId"},
		{"a page of one", func(q *AuditQuery) { q.Limit = 1 }, ""},
		{"the longest page", func(q *AuditQuery) { q.Limit = MaxAuditPage }, ""},
		{"a page after a cursor", func(q *AuditQuery) {
			q.Limit, q.Before = 50, AuditEntry{At: time.Now(), ID: "0b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f"}.Position().Encode()
		}, ""},
		{"a negative limit", func(q *AuditQuery) { q.Limit = -1 }, "limit"},
		{"a page too long", func(q *AuditQuery) { q.Limit = MaxAuditPage + 1 }, "limit"},
		{"a cursor no page handed out", func(q *AuditQuery) { q.Before = "not-a-cursor" }, "before"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := ok
			c.edit(&q)
			f, err := ParseAuditFilter("app1", q, actions)
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused a valid filter: %v", err)
				}
				if f.AppID != "app1" || !f.To.After(f.From) || f.Limit != int(q.Limit) || (f.Before != nil) != (q.Before != "") {
					t.Fatalf("filter %+v", f)
				}
				return
			}
			ft, isFault := fault.As(err)
			if !isFault || ft.Field() != c.field {
				t.Fatalf("err = %v, want an invalid %s", err, c.field)
			}
		})
	}
}

func TestAnAuditEntryTargetsWhatItsEventIsAbout(t *testing.T) {
	cases := []struct {
		entity         string
		fields         map[string]string
		wantType, want string
	}{
		{"user", map[string]string{"userId": "u1", "tenantRef": "t1"}, "user", "u1"},
		{"tenant", map[string]string{"tenantId": "t1"}, "tenant", "t1"},
		{"apikey", map[string]string{"keyId": "k1"}, "api_key", "k1"},
		{"subscription", map[string]string{"subscriptionId": "s1", "tenantId": "t1", "userId": "u1"}, "subscription", "s1"},
		{"payment", map[string]string{"tenantId": "t1", "userId": "u1"}, "tenant", "t1"},
		{"endpoint", map[string]string{"endpointId": "e1"}, "endpoint", "e1"},
		{"second_factor", map[string]string{"userId": "u1"}, "user", "u1"},
		{"app", map[string]string{"appId": "a1"}, "app", "a1"},
		{"something_new", map[string]string{"tenantId": "t1"}, "tenant", "t1"},
		{"something_new", map[string]string{}, "app", "a1"},
	}
	for _, c := range cases {
		gotType, got := Target(c.entity, "a1", func(name string) string { return c.fields[name] })
		if gotType != c.wantType || got != c.want {
			t.Errorf("Target(%s, %v) = %s %s, want %s %s", c.entity, c.fields, gotType, got, c.wantType, c.want)
		}
	}
}
