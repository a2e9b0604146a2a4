-- An app's text for the lines of its subscriptions' renewal invoices ('' leaves the provider's).
ALTER TABLE app_settings ADD COLUMN renewal_line_description text NOT NULL DEFAULT '';
