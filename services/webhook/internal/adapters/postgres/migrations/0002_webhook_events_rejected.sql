-- A call billing refuses for good (the provider says the object it names does not exist for the
-- connection's key, or that the key may not see it) is kept as rejected: answered 200, so the
-- provider stops delivering it, and listed for operators, who may still replay it.
ALTER TABLE webhook_events
    DROP CONSTRAINT webhook_events_outcome_check,
    ADD CONSTRAINT webhook_events_outcome_check CHECK (outcome IN ('received', 'applied', 'ignored', 'failed', 'rejected'));
