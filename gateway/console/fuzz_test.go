package console

import (
	"net/url"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/text"
)

// FuzzConsoleForm feeds arbitrary bodies to every form parser of the console: none may panic, and
// whatever one accepts holds the text rule and its limits, so nothing broken reaches identity.
func FuzzConsoleForm(f *testing.F) {
	for _, seed := range []string{
		"email=owner%40example.com&password=secret",
		"challenge=c&code=123456",
		"token=t&name=Ada&password=pw",
		"project=5a1c8e0a-1111-4222-8333-944445555666",
		"email=a%40b.c&name=&language=de",
		"code=1&current_password=pw",
		"action=create&type=read&name=k&description=d",
		"action=rename&key=0b6c2a52-7d1e-4a55-9d0e-3f1f2c4b5a61&name=x",
		"action=revoke&key=0b6c2a52-7d1e-4a55-9d0e-3f1f2c4b5a61&confirm=yes",
		"action=branding&display_name=Shop&accent=%23aabbcc&logo_url=https%3A%2F%2Fx&default_language=en",
		"action=clearProvider&slot=idpA&confirm=yes",
		"action=addOrigin&origin=https%3A%2F%2Fapp.example",
		"name=%00&email=%ff",
		"q=ada%40&after=YWRhQGV4YW1wbGUuY29tAA",
		"action=freeze&confirm=yes",
		"action=delete&confirm_email=ada%40example.com",
		"action=promotion&code=SPRING&name=Spring&free_units=5&free_days=0&max_redemptions=10&valid_from=2027-01-01&valid_until=2027-02-01T00%3A00%3A00Z",
		"action=price&product_name=Seats&amount=1250&currency=eur&interval=1+month",
		"action=taxRate&display_name=VAT&basis_points=1900&inclusive=yes",
		"action=referral&referral_promotion=7c9e6679-7425-40de-944b-e07fc1f90ae7",
		"action=settings&connection_id=7c9e6679-7425-40de-944b-e07fc1f90ae7&payment_return_url=https%3A%2F%2Fapp.example%2Fpaid&failed_payments_to_freeze=3&one_time_valid_days=365&renewal_line=Seats+%C3%97+%7Bquantity%7D",
		"action=limits&max_redemptions=0&valid_from=&valid_until=2027-03-01",
		"action=deactivate",
		"cursor=MTczMjA5NjAwMDAwMDAwMHwwfGFiYw",
		"q=acme&after=cursor-after-acme",
		"q=7c3e0a2b-3333-4444-8555-b66667777888&mode=test",
		"action=freeze&confirm=yes",
		"action=unfreeze&mode=live",
		"action=redirectUris&redirect_uris=https%3A%2F%2Fapp.example%2Fcb%0Ahttp%3A%2F%2Flocalhost%3A3000%2Fcb",
		"action=tokenLifetimes&access_ttl=900&refresh_ttl=2592000",
		"action=setProvider&slot=idpC&provider_name=C&client_id=c&client_secret=s&discovery_url=https%3A%2F%2Fidp.example&scopes=openid+email&allowed_domains=example.com%2Cexample.org",
		"days=30", "days=365", "days=%2B7", "days=7&days=90",
		"action=create&url=https%3A%2F%2Fhooks.example%2Fin&events=user.created+tenant.updated&description=d",
		"action=update&url=http%3A%2F%2F127.0.0.1%3A8080&events=*",
		"action=delete&confirm=yes",
		"action=retry&delivery=8d4f2e3b-4444-4555-8666-c77778888999",
		"action=recover&since=2026-11-26T09%3A30",
		"action=replay&event=9e5a3f4c-5555-4666-8777-d88889999aaa",
		"from=2026-11-01&to=2026-11-27&actor_kind=api_key&actor_id=b1c32b65&target_type=user&target_id=5c071d6c&action=identity.user.updated",
		"from=2026-11-28&to=2026-11-27", "from=2025-11-26&to=2026-11-27", "actor_kind=robot", "action=DROP+TABLE",
		"days=90", "days=3651", "days=090", "days=%2B1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		v, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		var accepted []string
		if s, err := signInFrom(v); err == nil {
			accepted = append(accepted, s.Email, s.Password)
		}
		if s, err := secondFactorFrom(v); err == nil {
			accepted = append(accepted, s.Challenge, s.Code)
		}
		if s, err := acceptFrom(v); err == nil {
			accepted = append(accepted, s.Token, s.Name, s.Password)
		}
		if s, err := switchFrom(v); err == nil {
			accepted = append(accepted, s)
		}
		if s, err := inviteFrom(v); err == nil {
			accepted = append(accepted, s.Email, s.Name, s.Language)
		}
		if s, err := totpFrom(v); err == nil {
			accepted = append(accepted, s.Code, s.Password)
		}
		if s, err := keyFrom(v); err == nil {
			accepted = append(accepted, s.Action, s.KeyID, s.Type, s.Name, s.Description)
			if s.Action == keyRevoke && v.Get("confirm") != "yes" {
				t.Errorf("a revocation without its confirmation was accepted: %q", body)
			}
		}
		if s, err := appFrom(v); err == nil {
			accepted = append(accepted, s.Action, s.Origin, s.DisplayName, s.Accent, s.LogoURL, s.Language, s.Policy, s.Slot)
			if (s.Action == appRotate || s.Action == appDisable) && v.Get("confirm") != "yes" {
				t.Errorf("%s without its confirmation was accepted: %q", s.Action, body)
			}
		}
		if s, err := searchFrom(v); err == nil {
			accepted = append(accepted, s.Query, s.After)
		}
		if s, err := userActionFrom(v); err == nil {
			accepted = append(accepted, s.Action, s.ConfirmEmail)
			if (s.Action == userFreeze || s.Action == userRevokeSessions || s.Action == userResetFactors) && v.Get("confirm") != "yes" {
				t.Errorf("%s without its confirmation was accepted: %q", s.Action, body)
			}
			if s.Action == userDelete && s.ConfirmEmail == "" {
				t.Errorf("a deletion without the typed address was accepted: %q", body)
			}
		}
		if s, err := billingFrom(v); err == nil {
			p := s.Promotion
			accepted = append(accepted, s.Action, s.ReferralPromotion, s.Price.ProductName, s.Price.Currency, s.Price.Interval,
				s.TaxRate.DisplayName, p.Code, p.Name, p.Description, p.ValidFrom, p.ValidUntil)
			accepted = append(accepted, s.Settings.ConnectionID, s.Settings.PaymentReturnURL, s.Settings.RenewalLine)
			if s.Action == billingSettings && (s.Settings.FailedPaymentsToFreeze < 1 || s.Settings.OneTimeValidDays < 1) {
				t.Errorf("billing settings below their bounds were accepted: %q", body)
			}
			if s.Price.Amount < 0 || s.TaxRate.BasisPoints < 0 || p.FreeUnits < 0 || p.FreeDays < 0 || p.MaxRedemptions < 0 {
				t.Errorf("a billing form with a negative number was accepted: %q", body)
			}
		}
		if s, err := promotionChangeFrom(v); err == nil {
			accepted = append(accepted, s.Action, s.Limits.ValidFrom, s.Limits.ValidUntil)
			if s.Limits.MaxRedemptions < 0 {
				t.Errorf("a negative maximum was accepted: %q", body)
			}
		}
		if s, err := redemptionsCursor(v); err == nil {
			accepted = append(accepted, s)
		}
		if s, err := tenantSearchFrom(v); err == nil {
			accepted = append(accepted, s.Query, s.After)
		}
		if s, err := invoiceModeFrom(v); err == nil {
			if s != modeLive && s != modeTest {
				t.Errorf("an invoice mode %q was accepted from %q", s, body)
			}
		}
		if s, err := tenantFrom(v); err == nil && s == tenantFreeze && v.Get("confirm") != "yes" {
			t.Errorf("a freeze without its confirmation was accepted: %q", body)
		}
		if days, err := rangeFrom(v); err == nil && !slices.Contains(analyticsRanges, days) {
			t.Errorf("rangeFrom accepted %d days from %q", days, body)
		}
		for _, parse := range []func(url.Values) (endpointForm, error){eventsFrom, endpointFrom} {
			s, err := parse(v)
			if err != nil {
				continue
			}
			accepted = append(append(accepted, s.Action, s.URL, s.Description, s.DeliveryID, s.Since, s.EventID), s.Events...)
			if (s.Action == endpointDelete || s.Action == endpointRotate || s.Action == endpointDisable) && v.Get("confirm") != "yes" {
				t.Errorf("%s without its confirmation was accepted: %q", s.Action, body)
			}
		}
		if s, err := appFrom(v); err == nil {
			accepted = append(accepted, s.RedirectURIs...)
			if s.AccessTTL < 0 || s.RefreshTTL < 0 || len(s.RedirectURIs) > maxRedirectURIs {
				t.Errorf("app settings out of their bounds were accepted: %q", body)
			}
		}
		if s, err := providerFrom(v); err == nil {
			p := s.Provider
			accepted = append(append(append(accepted, p.Slot, p.DisplayName, p.ClientId, p.DiscoveryUrl, p.Issuer, p.AuthorizationUrl,
				p.TokenUrl, p.UserinfoUrl, p.JwksUrl, s.ClientSecret), p.Scopes...), p.AllowedEmailDomains...)
			if p.DisplayName == "" || p.ClientId == "" {
				t.Errorf("a provider without its name or client id was accepted: %q", body)
			}
		}
		if s, err := auditFilterFrom(v, time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)); err == nil {
			accepted = append(accepted, s.From, s.To, s.ActorKind, s.ActorID, s.TargetType, s.TargetID, s.Action)
			from, ferr := time.Parse(time.DateOnly, s.From)
			to, terr := time.Parse(time.DateOnly, s.To)
			if ferr != nil || terr != nil || from.After(to) || to.Sub(from) >= auditMaxDays*24*time.Hour {
				t.Errorf("an audit range %s to %s was accepted from %q", s.From, s.To, body)
			}
			if (s.ActorKind != "" && !slices.Contains(auditActorKinds, s.ActorKind)) || (s.TargetType != "" && !slices.Contains(auditTargetTypes, s.TargetType)) ||
				(s.Action != "" && !auditAction.MatchString(s.Action)) {
				t.Errorf("an audit filter %+v was accepted from %q", s, body)
			}
		}
		if days, err := retentionFrom(v); err == nil && (days < minRetentionDays || days > maxRetentionDays) {
			t.Errorf("a retention of %d days was accepted from %q", days, body)
		}
		for _, s := range accepted {
			if !utf8.ValidString(s) || !text.Valid(s) || len(s) > maxToken {
				t.Errorf("a parser accepted %q from %q", s, body)
			}
		}
	})
}
