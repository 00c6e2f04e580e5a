-- 965_pub_document: what a permit's decision document reads that pub did not publish: the
-- rule and district parameters in force, the ingest batches the features came from, and the
-- wetland layer as of a date near a site (docs/reports.md "The permit's decision document").
-- Why in pub: the document is written by staff and GIS logins (rulem_staff, rulem_gis), who
-- read pub only; before this file it read core.parameter, ops.batch and core.wetland_layer
-- and so needed the writer's or the owner's login.

-- Every parameter row with the date its successor takes over: the value in force on D is the
-- row with effective_on <= D AND (effective_to IS NULL OR effective_to > D).
CREATE OR REPLACE VIEW pub.parameter AS
SELECT p.parameter_id, p.plan_area_id, p.name, p.value_num, p.value_text, p.unit, p.rule_ref,
       p.effective_on,
       lead(p.effective_on) OVER (PARTITION BY p.plan_area_id, p.name
                                  ORDER BY p.effective_on) AS effective_to,
       p.note
FROM core.parameter p;
COMMENT ON VIEW pub.parameter IS
  'The rule parameters (spec section 6) and the district text of the decision document '
  '(sql/032), every dated row: the value in force on a date D is the row with effective_on <= '
  'D and effective_to empty or later than D.';
COMMENT ON COLUMN pub.parameter.parameter_id IS 'Id of the parameter row.';
COMMENT ON COLUMN pub.parameter.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.parameter.name IS 'Parameter name, e.g. buffer_avg_width_ft.';
COMMENT ON COLUMN pub.parameter.value_num IS 'Numeric value (empty for a text parameter).';
COMMENT ON COLUMN pub.parameter.value_text IS 'Text value (empty for a numeric parameter).';
COMMENT ON COLUMN pub.parameter.unit IS 'Unit of the value, e.g. ft.';
COMMENT ON COLUMN pub.parameter.rule_ref IS 'Rule M paragraph the parameter serves.';
COMMENT ON COLUMN pub.parameter.effective_on IS 'Date the value takes effect.';
COMMENT ON COLUMN pub.parameter.effective_to IS
  'Date the next row of the same parameter takes effect (empty: still in force).';
COMMENT ON COLUMN pub.parameter.note IS 'What the parameter means, and whether it is a choice.';

-- The ingest batches of the layers that are not restricted (3(d) species records are not
-- named): the file, its digest and who loaded it, for a document's data-provenance appendix.
CREATE OR REPLACE VIEW pub.ingest_batch AS
SELECT b.batch_id, b.plan_area_id, b.layer, b.file_name, b.file_sha256, b.status,
       b.feature_count, b.created_by, b.started_at, b.finished_at
FROM ops.batch b
WHERE NOT EXISTS (SELECT 1 FROM ops.layer l WHERE l.layer = b.layer AND l.restricted);
COMMENT ON VIEW pub.ingest_batch IS
  'The ingest batches of the layers that are not restricted: which file each published '
  'feature''s batch_id came from, its SHA-256, who loaded it and when.';
COMMENT ON COLUMN pub.ingest_batch.batch_id IS 'Id of the batch (batch_id of a layer''s rows).';
COMMENT ON COLUMN pub.ingest_batch.plan_area_id IS 'Plan area.';
COMMENT ON COLUMN pub.ingest_batch.layer IS 'Layer the batch loaded.';
COMMENT ON COLUMN pub.ingest_batch.file_name IS 'Name of the file delivered.';
COMMENT ON COLUMN pub.ingest_batch.file_sha256 IS 'SHA-256 of the file delivered.';
COMMENT ON COLUMN pub.ingest_batch.status IS 'running, loaded, failed or duplicate.';
COMMENT ON COLUMN pub.ingest_batch.feature_count IS 'Features in the file.';
COMMENT ON COLUMN pub.ingest_batch.created_by IS 'Database login that loaded it.';
COMMENT ON COLUMN pub.ingest_batch.started_at IS 'When the load started.';
COMMENT ON COLUMN pub.ingest_batch.finished_at IS 'When the load finished.';

-- The wetland layer as of a date, near a window (a site and its margin): the layer a permit's
-- impacts and credit are measured against, drawn on its document's map.
CREATE OR REPLACE FUNCTION pub.wetland_as_of(p_plan_area_id integer, p_on date,
                                             p_window geometry)
RETURNS TABLE (wetland_id bigint, version_id bigint, delineation_id bigint, batch_id bigint,
               geom geometry)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  SELECT l.wetland_id, l.version_id, l.delineation_id, w.batch_id, l.geom
  FROM core.wetland_layer_near(p_plan_area_id, p_on, p_window) l
  JOIN core.wetland w ON w.version_id = l.version_id
  WHERE ST_Intersects(l.geom, p_window)
$$;
COMMENT ON FUNCTION pub.wetland_as_of(integer, date, geometry) IS
  'The wetland layer of a plan area as of a date (core.wetland_layer: approved delineations, '
  'each clipped to what no later study area covers), the wetlands meeting a window only, with '
  'the ingest batch of each wetland''s version.';

REVOKE ALL ON FUNCTION pub.wetland_as_of(integer, date, geometry) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pub.wetland_as_of(integer, date, geometry)
  TO rulem_staff, rulem_gis, rulem_restricted, rulem_etl;
GRANT SELECT ON pub.parameter, pub.ingest_batch
  TO rulem_staff, rulem_gis, rulem_restricted, rulem_etl;
