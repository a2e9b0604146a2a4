package contract

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// JSON types as the spec documents them ("documented types that look odd" included).
const (
	str  = "string"
	num  = "number"
	boo  = "boolean"
	obj  = "object"
	arr  = "array"
	null = "null"

	// orNull marks a field that is null while unset (a tenant without addresses).
	orNull = "|null"
)

// Field sets transcribed from the published interface ("Resources and fields").
var (
	userFields = map[string]string{
		"kind": str, "id": str, "appId": str, "language": str, "salutation": str, "salutationOther": str,
		"acceptedNewsletter": boo, "acceptedNewsletterDate": str, "lastAskedNewsletterSignUp": str,
		"newsletterMemberId": str, "name": str, "given_name": str, "family_name": str, "middle_name": str,
		"nickname": str, "preferred_username": str, "profile": str, "picture": str, "website": str, "email": str,
		"email_verified": boo, "gender": str, "other_gender": str, "birthdate": str, "zoneinfo": str, "locale": str,
		"phone_number": str, "phone_number_verified": boo, "freezed": boo, "deleted": boo, "tenantId": boo,
	}
	tenantUserFields = func() map[string]string {
		m := map[string]string{}
		for k, v := range userFields {
			if k != "kind" {
				m[k] = v
			}
		}
		for _, k := range []string{"verified_by_admin", "idpA_email_verified", "idpB_email_verified", "idpC_email_verified", "idpD_email_verified", "lastSignInAt", "lastSignInIp", "tenantId"} {
			m[k] = boo
		}
		return m
	}()
	addressFields = map[string]string{
		"id": str, "name": str, "city": str, "country": str, "line1": str, "line2": str, "postal_code": str,
		"state": str, "type": str, "deleted": boo,
	}
	tenantFields = map[string]string{
		"kind": str, "id": str, "name": str, "pspxCustomerId": str, "pspxPriceId": str, "pspxProductId": str,
		"pspxSubscriptionId": str, "pspxTrialingPriceId": str, "pspxTrialingProductId": str,
		"pspxTrialingSubscriptionId": str, "pspxCheckoutSessionId": str, "pspxDefaultPaymentMethodId": str,
		"pspxSubscriptionCancelAtPeriodEnd": boo, "pspxSubscriptionCancelAt": str, "pspxPaymentMethod": str,
		"mode": str, "description": str, "pspxOneTimePaymentValidThru": str, "freezedDueFailedPayment": boo,
		"paidUntil": str, "freeUntil": str, "paidUnits": str, "freeUnits": str, "companyName": str,
		"companyVATId": str, "companyTaxType": str, "companyTaxExempt": str, "isBusinessCustomer": boo,
		"isInvoicePending": boo, "freezed": boo, "paymentFailed": boo, "paymentFailedCount": num,
		"paymentFailedDate": str, "deleted": boo, "shippingAddress": obj + orNull, "billingAddress": obj + orNull, "users": arr,
	}
	v1SuccessFields = map[string]string{"success": boo, "message": str, "error": null, "data": obj}
	v1ErrorFields   = map[string]string{"success": boo, "error": str, "message": null, "data": null}
	apiErrorFields  = map[string]string{"validation": str, "code": str, "message": str}
)

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return str
	case float64:
		return num
	case bool:
		return boo
	case map[string]any:
		return obj
	case []any:
		return arr
	case nil:
		return null
	}
	return fmt.Sprintf("%T", v)
}

// assertShape fails unless obj has exactly the fields of want, each of the documented JSON type.
func assertShape(t *testing.T, what string, got any, want map[string]string) {
	t.Helper()
	m, ok := got.(map[string]any)
	if !ok {
		t.Fatalf("%s: want a JSON object, got %s", what, jsonType(got))
	}
	var problems []string
	for k, typ := range want {
		v, present := m[k]
		switch {
		case !present:
			problems = append(problems, "missing "+k)
		case jsonType(v) != typ && typ != jsonType(v)+orNull && !(strings.HasSuffix(typ, orNull) && v == nil):
			problems = append(problems, fmt.Sprintf("%s is %s, want %s", k, jsonType(v), typ))
		}
	}
	for k := range m {
		if _, known := want[k]; !known {
			problems = append(problems, "undocumented "+k)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Fatalf("%s does not match the spec: %s", what, strings.Join(problems, "; "))
	}
}
