-- An app's look on its hosted pages and mails and their default language (domain.Branding). Empty
-- strings are the neutral look and English, so existing apps keep what they showed. The domain
-- validates every value; the checks here hold the shapes the pages rely on (a colour written into
-- a stylesheet, a logo whose origin goes into a Content-Security-Policy) against any other writer.
alter table apps
	add column display_name text not null default '' check (char_length(display_name) <= 100),
	add column accent_color text not null default '' check (accent_color = '' or accent_color ~ '^#[0-9a-f]{6}$'),
	add column logo_url text not null default '' check (logo_url = '' or (logo_url like 'https://%' and char_length(logo_url) <= 2048)),
	add column default_language text not null default '' check (default_language in ('', 'en', 'de'));
