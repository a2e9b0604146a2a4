-- What each use of a promotion granted, kept with the use: operators list a promotion's
-- redemptions and a tenant's grants. Grants of a promotion never change, so the existing uses take
-- their promotion's.
ALTER TABLE redemptions ADD COLUMN free_units integer NOT NULL DEFAULT 0;
ALTER TABLE redemptions ADD COLUMN free_days integer NOT NULL DEFAULT 0;
ALTER TABLE referral_rewards ADD COLUMN free_units integer NOT NULL DEFAULT 0;
ALTER TABLE referral_rewards ADD COLUMN free_days integer NOT NULL DEFAULT 0;
UPDATE redemptions r SET free_units = p.free_units, free_days = p.free_days FROM promotions p WHERE p.id = r.promotion_id;
UPDATE referral_rewards g SET free_units = p.free_units, free_days = p.free_days FROM promotions p WHERE p.id = g.promotion_id;

-- Keyset pages of a promotion's uses (newest first) and a tenant's grants and payments.
CREATE INDEX redemptions_promotion_time ON redemptions (promotion_id, redeemed_at, tenant_id);
CREATE INDEX redemptions_tenant ON redemptions (tenant_id);
CREATE INDEX referral_rewards_promotion_time ON referral_rewards (promotion_id, granted_at, referred_tenant_id);
CREATE INDEX referral_rewards_referrer ON referral_rewards (referrer_tenant_id);
CREATE INDEX checkout_sessions_tenant ON checkout_sessions (tenant_id, created_at);
CREATE INDEX charges_tenant ON charges (tenant_id, created_at);
