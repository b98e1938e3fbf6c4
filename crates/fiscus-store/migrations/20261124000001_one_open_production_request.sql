-- At most one open production access request per workspace. Without it, two admins asking at once could
-- leave two open requests; turning access off withdraws one, and the other could later be confirmed by a
-- single admin. A database that already holds such a pair keeps its oldest and withdraws the rest first.
UPDATE production_access_requests SET state = 'withdrawn'
WHERE state = 'open'
  AND id NOT IN (SELECT MIN(id) FROM production_access_requests WHERE state = 'open' GROUP BY workspace_id);
CREATE UNIQUE INDEX production_access_one_open ON production_access_requests (workspace_id) WHERE state = 'open';
