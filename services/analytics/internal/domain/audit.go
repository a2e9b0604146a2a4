package domain

import (
	"slices"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/keyset"
)

// AuditEntry is one change an app's data underwent, built from the event that recorded it: who did
// it (the event's actor), what (the event type as the action), to what (the target), when, and the
// names of the fields it changed. It holds ids and field names only, never a value.
type AuditEntry struct {
	ID            string // the event id: an entry is recorded once per event
	AppID         string
	At            time.Time // the event's time
	Action        string    // the event type, e.g. identity.user.updated
	TargetType    string    // user, tenant, api_key, app, subscription, payment, promotion, endpoint
	TargetID      string
	ActorKind     string // api_key, user, operator, admin, provider_event, system; "" for events from before actors
	ActorID       string
	ActorKeyType  string // read or write, for an API key
	RequestID     string
	ClientAddress string
	ChangedFields []string // the field names an update changed; empty for other actions
}

// Position is e's place in the log's order, newest first: its time, then its id.
func (e AuditEntry) Position() keyset.Newest { return keyset.NewestOf(e.At, e.ID) }

// The retention an app's audit entries are kept for, in days: DefaultAuditRetentionDays until an
// operator sets another within the bounds.
const (
	DefaultAuditRetentionDays = 365
	MinAuditRetentionDays     = 1
	MaxAuditRetentionDays     = 3650
)

// CheckAuditRetention validates a retention setting in days.
func CheckAuditRetention(days int) error {
	if days < MinAuditRetentionDays || days > MaxAuditRetentionDays {
		return fault.InvalidField("retentionDays", "must be between %d and %d", MinAuditRetentionDays, MaxAuditRetentionDays)
	}
	return nil
}

// ActorKinds are the actor kinds an entry may name, which a filter may ask for.
var ActorKinds = []string{"api_key", "user", "operator", "admin", "provider_event", "system"}

// maxFilterID bounds the ids a filter may name: every id Berth stores is far shorter.
const maxFilterID = 128

// MaxAuditPage is the most entries one page of the log holds.
const MaxAuditPage = 1000

// AuditFilter selects an app's audit entries: those at From <= At < To, and of the actor, target
// and action when they are set (each must match exactly); with Before, only those older than it
// (Position().Older). Limit, when above 0, is how many of them a store visits at most, newest
// first.
type AuditFilter struct {
	AppID      string
	From, To   time.Time
	ActorKind  string
	ActorID    string
	TargetType string
	TargetID   string
	Action     string
	Before     *keyset.Newest
	Limit      int
}

// AuditQuery is a filter as the caller spells it: the from/to days of every analytics list, the
// optional exact matches, and the page: Limit entries at most (0: the whole range) older than the
// cursor Before ("": from the newest).
type AuditQuery struct {
	From, To                     string
	ActorKind, ActorID           string
	TargetType, TargetID, Action string
	Limit                        int32
	Before                       string
}

// ParseAuditFilter validates q for appID. actions are the event types an entry can have; an action
// outside them, an unknown actor kind or target type, an id too long to be one, a limit outside 0
// to MaxAuditPage or a cursor no page handed out are refused naming the parameter, so a typo is an
// error instead of an empty list. The filter's Limit is q's: a pager asks the store for one more.
func ParseAuditFilter(appID string, q AuditQuery, actions []string) (AuditFilter, error) {
	r, err := ParseRange(q.From, q.To)
	if err != nil {
		return AuditFilter{}, err
	}
	if q.Limit < 0 || q.Limit > MaxAuditPage {
		return AuditFilter{}, fault.InvalidField("limit", "must be between 1 and %d, or 0 for the whole range", MaxAuditPage)
	}
	before, err := keyset.DecodeNewest("before", q.Before)
	if err != nil {
		return AuditFilter{}, err
	}
	f := AuditFilter{AppID: appID, From: r.From, To: r.End(), ActorKind: q.ActorKind, ActorID: q.ActorID,
		TargetType: q.TargetType, TargetID: q.TargetID, Action: q.Action, Before: before, Limit: int(q.Limit)}
	if f.ActorKind != "" && !slices.Contains(ActorKinds, f.ActorKind) {
		return AuditFilter{}, fault.InvalidField("actorKind", "must be one of %v", ActorKinds)
	}
	if f.TargetType != "" && !slices.Contains(TargetTypes, f.TargetType) {
		return AuditFilter{}, fault.InvalidField("targetType", "must be one of %v", TargetTypes)
	}
	if f.Action != "" && !slices.Contains(actions, f.Action) {
		return AuditFilter{}, fault.InvalidField("action", "must be an event type, e.g. identity.user.updated")
	}
	for _, id := range []struct{ field, v string }{{"actorId", f.ActorID}, {"targetId", f.TargetID}} {
		if len(id.v) > maxFilterID {
			return AuditFilter{}, fault.InvalidField(id.field, "must be at most %d characters", maxFilterID)
		}
	}
	return f, nil
}

// Matches reports whether e is one f selects (Limit aside, which cuts the selection).
func (f AuditFilter) Matches(e AuditEntry) bool {
	return e.AppID == f.AppID && !e.At.Before(f.From) && e.At.Before(f.To) &&
		(f.Before == nil || e.Position().Older(*f.Before)) &&
		matches(f.ActorKind, e.ActorKind) && matches(f.ActorID, e.ActorID) &&
		matches(f.TargetType, e.TargetType) && matches(f.TargetID, e.TargetID) && matches(f.Action, e.Action)
}

// matches is an optional exact filter: "" matches anything.
func matches(want, have string) bool { return want == "" || want == have }

// TargetTypes are the kinds of thing an entry's target is, each named by the payload field that
// holds its id (targetFields).
var TargetTypes = []string{"user", "tenant", "api_key", "app", "subscription", "payment", "promotion", "endpoint"}

// targetFields maps an event type's entity (its second segment, identity.<entity>.updated) to the
// payload fields naming the target, best first, each with the target type it names. An entity not
// listed is about a user or else a tenant.
var targetFields = map[string][]targetField{
	"user":          {{"userId", "user"}},
	"sessions":      {{"userId", "user"}},
	"second_factor": {{"userId", "user"}},
	"tenant":        {{"tenantId", "tenant"}},
	"apikey":        {{"keyId", "api_key"}},
	"app":           {{"appId", "app"}},
	"endpoint":      {{"endpointId", "endpoint"}},
	"promotion":     {{"promotionId", "promotion"}, {"tenantId", "tenant"}},
	"subscription":  {{"subscriptionId", "subscription"}, {"tenantId", "tenant"}},
	"payment":       {{"paymentId", "payment"}, {"tenantId", "tenant"}},
}

var defaultTargetFields = []targetField{{"userId", "user"}, {"tenantId", "tenant"}}

type targetField struct{ field, targetType string }

// Target is the target of an event of entity (the type's second segment) whose payload has the
// string fields field reads (a missing field reads ""): the first candidate field that is set.
// An event naming none of them targets the app itself.
func Target(entity string, appID string, field func(name string) string) (targetType, targetID string) {
	candidates, ok := targetFields[entity]
	if !ok {
		candidates = defaultTargetFields
	}
	for _, c := range candidates {
		if id := field(c.field); id != "" {
			return c.targetType, id
		}
	}
	return "app", appID
}
