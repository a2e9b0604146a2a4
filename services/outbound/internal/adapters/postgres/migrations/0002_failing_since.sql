-- When an endpoint's attempts began failing without a success since (NULL: its last attempt
-- succeeded, or none was made); five days of it disable the endpoint.
ALTER TABLE endpoints ADD COLUMN failing_since timestamptz;
