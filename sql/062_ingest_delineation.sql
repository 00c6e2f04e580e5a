-- 062_ingest_delineation: `rulem-db ingest delineation FILE` (docs/ingest.md, "Delineations"): one delivered
-- file of wetland polygons becomes one delineation record, status submitted, with its
-- wetlands and its study area.
--   * The number is the one given, or the next free D-<year>-<nn> (the form the District uses).
--     Given the number of a delineation that is not approved, the file revises it: its
--     wetlands are merged (new versions only for changed ones, the ones no longer delivered
--     closed) and the record goes back to submitted. An approved delineation is never
--     revised: its wetlands are part of the record; a re-delineation is a new delineation,
--     which supersedes the old one where their study areas overlap once it is approved
--     (core.wetland_layer does that at query time).
--   * The study area is the one delivered (--study-area FILE); else the union of the current
--     parcels its wetlands touch and the wetlands themselves (so no wetland falls outside its
--     own study area); else, with no parcels there, the convex hull of its wetlands.
-- The wetlands themselves go through ops.ingest_prepare / ops.ingest_apply (061) with the
-- delineation as their owner.

CREATE OR REPLACE FUNCTION ops.ingest_delineation_open(p_batch bigint, p_plan_area_id integer,
                                                       p_number text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  n     text := nullif(btrim(p_number), '');
  yr    text := to_char(current_date, 'YYYY');
  k     integer;
  cur   record;
  fid   bigint;
BEGIN
  IF n IS NULL THEN
    SELECT coalesce(max(substring(feature_key FROM '^D-' || yr || '-([0-9]+)$')::integer), 0) + 1
    INTO k FROM core.feature
    WHERE layer = 'delineation' AND plan_area_id = p_plan_area_id
      AND feature_key ~ ('^D-' || yr || '-[0-9]+$');
    n := format('D-%s-%s', yr, lpad(k::text, 2, '0'));
  END IF;
  SELECT d.delineation_id, d.status, d.approved_on INTO cur
  FROM core.feature f JOIN core.delineation d ON d.delineation_id = f.feature_id
  WHERE f.layer = 'delineation' AND f.plan_area_id = p_plan_area_id AND f.feature_key = n
    AND d.valid_to IS NULL;
  IF FOUND AND cur.status = 'approved' THEN
    RAISE EXCEPTION 'delineation % was approved on %, so its wetlands are part of the record and '
      'cannot be revised; deliver the re-delineation as a new delineation (without --delineation, '
      'or with a new number): once approved it supersedes % where their study areas overlap',
      n, cur.approved_on, n
      USING ERRCODE = 'check_violation';
  END IF;
  INSERT INTO core.feature (layer, plan_area_id, feature_key)
  VALUES ('delineation', p_plan_area_id, n)
  ON CONFLICT (layer, plan_area_id, feature_key) DO NOTHING;
  SELECT feature_id INTO fid FROM core.feature
  WHERE layer = 'delineation' AND plan_area_id = p_plan_area_id AND feature_key = n;
  RETURN jsonb_build_object('delineation_id', fid, 'delineation_no', n,
                            'revision', cur.delineation_id IS NOT NULL,
                            'previous_status', cur.status);
END $$;
COMMENT ON FUNCTION ops.ingest_delineation_open(bigint, integer, text) IS
  'Ingest: the stable id and number of the delineation a wetland file delivers (the next free '
  'D-<year>-<nn> when none is given); refuses to revise an approved delineation.';

CREATE OR REPLACE FUNCTION ops.ingest_delineation_record(p_spec jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  b        bigint := (p_spec ->> 'batch_id')::bigint;
  pa       integer := (p_spec ->> 'plan_area_id')::integer;
  did      bigint := (p_spec ->> 'delineation_id')::bigint;
  dno      text := p_spec ->> 'delineation_no';
  a        jsonb := coalesce(p_spec -> 'attributes', '{}');
  study    text := ops.ingest_table(b, 'study');
  wet      geometry;
  parcels  geometry;
  area     geometry;
  how      text;
  bad      text;
  v_permit bigint;
  v_field  date;
  v_submitted date;
  n_wet    integer;
  v_overlaps text;
  existing boolean;
BEGIN
  -- Attributes of the record (from the mapping file's [delineation] table and options).
  IF a ->> 'permit' IS NOT NULL THEN
    v_permit := ops.ingest_ref('permit', pa, a ->> 'permit');
    IF v_permit IS NULL THEN
      RAISE EXCEPTION 'permit: %', ops.ingest_ref_problem('permit', pa, a ->> 'permit')
        USING ERRCODE = 'foreign_key_violation';
    END IF;
  END IF;
  v_field := ops.ingest_date(a ->> 'field_on');
  v_submitted := coalesce(ops.ingest_date(a ->> 'submitted_on'), current_date);
  IF (a ->> 'field_on' IS NOT NULL AND v_field IS NULL)
     OR (a ->> 'submitted_on' IS NOT NULL AND ops.ingest_date(a ->> 'submitted_on') IS NULL) THEN
    RAISE EXCEPTION 'the delineation''s field_on % or submitted_on % is not a date as YYYY-MM-DD',
      a ->> 'field_on', a ->> 'submitted_on' USING ERRCODE = 'invalid_datetime_format';
  END IF;

  SELECT ST_Collect(geom), count(*) INTO wet, n_wet FROM core.wetland
  WHERE delineation_id = did AND valid_to IS NULL;
  IF n_wet = 0 THEN
    RAISE EXCEPTION 'no wetland of delineation % could be loaded', dno
      USING ERRCODE = 'no_data_found';
  END IF;

  -- The study area.
  IF to_regclass(study) IS NOT NULL THEN
    EXECUTE format(
      'SELECT string_agg(format(''feature %%s: %%s'', s._fid, g.problem), ''; '') '
      '         FILTER (WHERE g.problem IS NOT NULL), '
      '       ST_Multi(ST_CollectionExtract(ST_Union(g.geom), 3)) '
      'FROM %s s CROSS JOIN LATERAL ops.ingest_geometry(s._geom, ''MULTIPOLYGON'', %s, %L, %s, '
      '  %s) g',
      study, coalesce(p_spec ->> 'study_srid', 'NULL'), p_spec ->> 'study_proj',
      (p_spec ->> 'work_srid')::integer, coalesce(p_spec ->> 'max_area_change', '0.001'))
    INTO bad, area;
    IF bad IS NOT NULL OR area IS NULL OR ST_IsEmpty(area) THEN
      RAISE EXCEPTION 'the study area file has no usable polygon (%)',
        coalesce(bad, 'no polygons') USING ERRCODE = 'invalid_parameter_value';
    END IF;
    how := 'the delivered study area';
  ELSE
    SELECT ST_Union(p.geom) INTO parcels FROM core.parcel p
    WHERE p.valid_to IS NULL AND p.plan_area_id = pa
      AND EXISTS (SELECT 1 FROM core.wetland w WHERE w.delineation_id = did
                  AND w.valid_to IS NULL AND w.geom && p.geom AND ST_Intersects(w.geom, p.geom));
    IF parcels IS NOT NULL THEN
      -- the wetlands count only where the parcels do not already cover them
      SELECT ST_Union(parcels, coalesce(ST_Union(w.geom), ST_GeomFromText('POLYGON EMPTY',
                                                                           ST_SRID(parcels))))
      INTO area FROM core.wetland w
      WHERE w.delineation_id = did AND w.valid_to IS NULL AND NOT ST_Covers(parcels, w.geom);
      how := 'the parcels its wetlands touch, with the wetlands';
    ELSE
      area := ST_ConvexHull(wet);
      how := 'the convex hull of its wetlands (no parcels loaded there)';
    END IF;
  END IF;
  area := ST_Multi(ST_CollectionExtract(ST_MakeValid(area), 3));

  -- The record: a new delineation, or a new version of the one it revises (back to submitted).
  existing := EXISTS (SELECT 1 FROM core.delineation
                      WHERE delineation_id = did AND valid_to IS NULL);
  IF existing THEN
    UPDATE core.delineation SET permit_id = coalesce(v_permit, permit_id),
      consultant = coalesce(a ->> 'consultant', consultant),
      field_on = coalesce(v_field, field_on), method = coalesce(a ->> 'method', method),
      file_name = a ->> 'file_name', file_sha256 = a ->> 'file_sha256', status = 'submitted',
      submitted_on = v_submitted,
      tep_reviewed_on = NULL, tep_findings = NULL, approved_on = NULL, rejected_on = NULL,
      geom = area, source_fid = NULL, source_attributes = a, batch_id = b
    WHERE delineation_id = did AND valid_to IS NULL;
  ELSE
    INSERT INTO core.delineation (delineation_id, plan_area_id, delineation_no, permit_id,
      consultant, field_on, method, file_name, file_sha256, status, submitted_on, geom,
      source_attributes, batch_id)
    VALUES (did, pa, dno, v_permit, a ->> 'consultant', v_field, a ->> 'method',
      a ->> 'file_name', a ->> 'file_sha256', 'submitted', v_submitted, area, a, b);
  END IF;

  -- Supersession is decided at query time; say here which approved delineations this one
  -- will supersede where the study areas overlap, once it is approved.
  SELECT string_agg(format('%s (%s acres)', d.delineation_no,
                           round(core.acres(ST_Intersection(d.geom, area)), 4)), ', '
                    ORDER BY d.delineation_no)
  INTO v_overlaps FROM core.delineation d
  WHERE d.valid_to IS NULL AND d.plan_area_id = pa AND d.status = 'approved'
    AND d.delineation_id <> did AND d.geom && area AND ST_Intersects(d.geom, area)
    AND ST_Area(ST_Intersection(d.geom, area)) > 0;

  INSERT INTO ops.batch_note (batch_id, kind, field, message, detail)
  VALUES (b, 'info', 'delineation', format(
            'delineation %s %s, status submitted: %s wetlands; study area %s acres from %s%s',
            dno, CASE WHEN existing THEN 'revised' ELSE 'recorded' END, n_wet,
            round(core.acres(area), 4), how,
            CASE WHEN v_overlaps IS NOT NULL THEN '; once approved it supersedes, where their '
                 'study areas overlap, ' || v_overlaps ELSE '' END),
          jsonb_build_object('delineation_no', dno, 'delineation_id', did, 'wetlands', n_wet,
                             'study_area_acres', core.acres(area), 'study_area_from', how));
  RETURN jsonb_build_object('delineation_id', did, 'delineation_no', dno, 'wetlands', n_wet,
                            'study_area_acres', core.acres(area), 'study_area_from', how,
                            'revised', existing, 'supersedes', v_overlaps);
END $$;
COMMENT ON FUNCTION ops.ingest_delineation_record(jsonb) IS
  'Ingest: records (or revises) a delivered delineation, status submitted, with its study area '
  '(delivered, else the parcels its wetlands touch, else their convex hull).';

REVOKE ALL ON FUNCTION ops.ingest_delineation_open(bigint, integer, text),
  ops.ingest_delineation_record(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.ingest_delineation_open(bigint, integer, text),
  ops.ingest_delineation_record(jsonb) TO rulem_etl;
