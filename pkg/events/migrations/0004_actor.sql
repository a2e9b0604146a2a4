-- Who caused the event (events.Actor as JSON): the relay carries it into the envelope, from where
-- the audit log reads it. Null for events written before actors were stamped.
alter table outbox add column actor jsonb;
