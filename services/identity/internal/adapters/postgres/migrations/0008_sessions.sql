-- Sessions: every refresh-token family is one sign-in's session. It records when it was last used
-- and when it ends (the newest token's expiry, moved by every rotation), so that listing a user's
-- live sessions reads the families alone, and the browser of the sign-in, which the
-- authorization code carries from the hosted page to the exchange that starts the family.
alter table auth_codes
    add column client_ip  text not null default '',
    add column user_agent text not null default '';

alter table refresh_families
    add column last_used_at timestamptz,
    add column expires_at   timestamptz,
    add column client_ip    text not null default '',
    add column user_agent   text not null default '';

-- Families from before: last used at their newest token's creation, ending with its expiry.
update refresh_families f
   set last_used_at = coalesce(t.last_created, f.created_at),
       expires_at   = coalesce(t.last_expires, f.created_at)
  from (select family_id, max(created_at) as last_created, max(expires_at) as last_expires
          from refresh_tokens group by family_id) t
 where t.family_id = f.id;
update refresh_families set last_used_at = created_at, expires_at = created_at where last_used_at is null;

alter table refresh_families
    alter column last_used_at set not null,
    alter column expires_at set not null;

-- A user's live sessions, most recently used first.
create index refresh_families_live on refresh_families (app_id, user_id, last_used_at desc) where not revoked;
