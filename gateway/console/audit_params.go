package console

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// The audit page's filter limits. Analytics checks every value again; these keep a mistyped filter
// on the page with its field named instead of a refusal from the backend.
const (
	auditDefaultDays = 7    // the range a link without dates shows, ending today (UTC)
	auditMaxDays     = 366  // analytics' longest range, both days included
	maxAuditID       = 256  // an actor's or target's id: a UUID, a consumer's or a provider's event id
	maxAuditAction   = 128  // an event type
	minRetentionDays = 1    // the fewest days analytics keeps an app's audit entries
	maxRetentionDays = 3650 // the most
)

// auditActorKinds and auditTargetTypes are the values analytics records (docs/audit-log.md).
var (
	auditActorKinds  = []string{"api_key", "user", "operator", "admin", "provider_event", "system"}
	auditTargetTypes = []string{"user", "tenant", "api_key", "app", "subscription", "payment", "promotion", "endpoint"}
)

// auditAction is the shape of an event type (identity.user.updated); analytics decides which exist.
var auditAction = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){1,3}$`)

// auditFilter is the audit page's GET form: the range of UTC days (both included), the optional
// exact filters, "" for none, and the cursor of the page (Before, "" for the newest entries), which
// analytics alone reads.
type auditFilter struct {
	From, To                     string
	ActorKind, ActorID           string
	TargetType, TargetID, Action string
	Before                       string
}

// auditFilterFrom reads the audit page's query. today is the UTC day the default range ends on.
func auditFilterFrom(v url.Values, today time.Time) (auditFilter, error) {
	to, err := auditDay(v, "to", today)
	if err != nil {
		return auditFilter{}, err
	}
	from, err := auditDay(v, "from", to.AddDate(0, 0, 1-auditDefaultDays))
	if err != nil {
		return auditFilter{}, err
	}
	// A default range reaching before year 1 would print as a day no parser reads back.
	if from.After(to) || to.Sub(from) >= auditMaxDays*24*time.Hour || from.Year() < 1 {
		return auditFilter{}, errField{"from"}
	}
	f := auditFilter{From: from.Format(time.DateOnly), To: to.Format(time.DateOnly)}
	if f.ActorKind, err = optionalOneOf(v, "actor_kind", auditActorKinds); err != nil {
		return auditFilter{}, err
	}
	if f.TargetType, err = optionalOneOf(v, "target_type", auditTargetTypes); err != nil {
		return auditFilter{}, err
	}
	if f.ActorID, err = textField(v, "actor_id", maxAuditID, false); err != nil {
		return auditFilter{}, err
	}
	if f.TargetID, err = textField(v, "target_id", maxAuditID, false); err != nil {
		return auditFilter{}, err
	}
	if f.Action, err = textField(v, "action", maxAuditAction, false); err != nil {
		return auditFilter{}, err
	}
	if f.Action != "" && !auditAction.MatchString(f.Action) {
		return auditFilter{}, errField{"action"}
	}
	if f.Before, err = textField(v, "before", maxToken, false); err != nil {
		return auditFilter{}, err
	}
	return f, nil
}

// auditDay reads a YYYY-MM-DD day; absent or empty is byDefault.
func auditDay(v url.Values, key string, byDefault time.Time) (time.Time, error) {
	s, err := textField(v, key, len(time.DateOnly), false)
	if err != nil {
		return time.Time{}, err
	}
	if s == "" {
		y, m, d := byDefault.UTC().Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, errField{key}
	}
	return t, nil
}

// optionalOneOf reads a select's value: "" (any) or one of allowed.
func optionalOneOf(v url.Values, key string, allowed []string) (string, error) {
	s := v.Get(key)
	if s != "" && !slices.Contains(allowed, s) {
		return "", errField{key}
	}
	return s, nil
}

// retentionFrom reads the retention form: days, a whole number from 1 to 3650 written plainly.
func retentionFrom(v url.Values) (int32, error) {
	s, err := textField(v, "days", len(strconv.Itoa(maxRetentionDays)), true)
	if err != nil {
		return 0, err
	}
	days, err := strconv.Atoi(s)
	if err != nil || strconv.Itoa(days) != s || days < minRetentionDays || days > maxRetentionDays {
		return 0, errField{"days"}
	}
	return int32(days), nil
}
