-- Referral rewards: the app's referral promotion granted to the referrer's tenant because a
-- referred tenant first paid. One per referred tenant, committed with the referrer's account change.
CREATE TABLE referral_rewards (
    referred_tenant_id uuid PRIMARY KEY,
    app_id             uuid NOT NULL,
    promotion_id       uuid NOT NULL REFERENCES promotions (id),
    referrer_tenant_id uuid NOT NULL,
    referrer_user_id   uuid NOT NULL,
    granted_at         timestamptz NOT NULL
);

-- Tenants that paid before billing recorded it have EverPaid set, so their next payment is not
-- taken for their first.
UPDATE accounts SET state = jsonb_set(state, '{EverPaid}', 'true')
WHERE (state->>'PaidUnits')::bigint > 0 OR state->>'PspxSubscriptionID' <> '';
