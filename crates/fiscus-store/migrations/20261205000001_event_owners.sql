-- The application an event's subject belongs to (the application that proposed the action or invoked the
-- workflow run; NULL when a person, the CLI or a worker did). Webhook fan-out delivers an event to an
-- endpoint only when the endpoint's application owns the subject or may read it (fiscus_domain::webhooks::
-- may_hear). Events written before this column existed have no owner: only readers of their kind hear them.
ALTER TABLE outbox ADD COLUMN owner_application_id TEXT;
