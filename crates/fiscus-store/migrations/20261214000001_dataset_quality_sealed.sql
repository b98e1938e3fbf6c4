-- A dataset's quality report is sealed like the dataset it describes (issue 34): a report edited in the
-- database would otherwise be served as the import's. The seal binds it to its dataset's `dst_…` id (the
-- sealed row's key) and number. Reports written before this migration have no seal and cannot be checked:
-- they are dropped (they were derived from the dataset's sealed rows; such a dataset shows no report, as one
-- imported before reports existed).
DELETE FROM dataset_quality;
ALTER TABLE dataset_quality ADD COLUMN dataset_id TEXT NOT NULL DEFAULT '';
ALTER TABLE dataset_quality ADD COLUMN seal_mac TEXT;
