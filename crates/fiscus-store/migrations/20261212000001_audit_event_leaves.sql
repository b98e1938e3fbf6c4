-- An audit event's place in its workspace's transparency log, on its own row (issue 33, by measurement). The
-- integrator used to add a row to the index by record (`tlog_leaves`) for every leaf, half of them audit
-- events, and on two cores that index was most of what the log cost keyed writes. The chaining knows an
-- event's leaf index when it inserts the event, so it writes it there at no cost; proofs and bundles find an
-- event's leaf by its sequence number and read it from the log itself (`tlog_batches`), and the index keeps
-- the other leaves (and the events chained before this column, or logged by a backfill, whose rows are NULL).
-- Added nullable, so the previous release keeps serving while it runs.
ALTER TABLE audit_events ADD COLUMN leaf_index BIGINT;
