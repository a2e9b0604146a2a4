-- The user who pays: the user whose tenant access token created a checkout, or route 13's userId.
-- Money events name them, so analytics can list each payment with its payer. Empty when an API
-- key created the checkout.
alter table checkout_sessions add column user_id text not null default '';
alter table charges add column user_id text not null default '';
