-- An app's email-verification policy (domain.EmailVerification). Apps that existed before the
-- policy keep their behaviour, so their rows read 'optional'; the default is then dropped, since
-- the application always writes the policy and new apps start 'required'.
alter table apps add column email_verification text not null default 'optional'
    check (email_verification in ('required', 'optional'));
alter table apps alter column email_verification drop default;
