-- 285_check_incremental: the nightly's rule checks evaluate only the permits whose inputs
-- changed since the run before and carry the others' findings and outcomes over, so a night
-- costs in proportion to what changed (docs/checks.md, "Incremental runs": the table of which
-- change reaches which permits, and why). The result is the same as a full run: every permit
-- in scope is covered by the new run (its outcomes through checks.run_permit, its findings
-- copied), and pub.finding and pub.permit_compliance read it like any plan-wide run.
--
-- What counts as a change, and whom it touches (when in doubt, more permits):
--   a permit, or any feature that belongs to one    that permit (old and new owner)
--   a permit, in addition                            the permits whose disturbance meets its
--                                                    disturbance (7(b) names it and its date)
--   a credit transfer                                the giving and the receiving permit
--   a parcel                                         permits naming its PIN (before or after);
--                                                    permits whose own buffer meets it (6(b))
--   a feature other permits' checks read by place    the permits whose places (the site: their
--   (wetland, delineation, ditch, buffer, trail,     parcels' box widened by checks.reach_m();
--   marker, soil, heritage area, easement, another   or their own features of the kinds the
--   permit's replacement or disturbance, ...)        checks compare it with) meet its old or
--                                                    new geometry (checks.recheck_places)
--   wetland, delineation or ditch, in addition       6(a) connectivity: the permits near the
--                                                    network the change touches when that
--                                                    network reaches a seed, and those whose
--                                                    replacement touches it
--   a hydroperiod record's wetland                   the permits with a record naming it
--   a replacement without a permit                   the District projects
--   a replacement's monitoring record                its replacement's permit (or the
--                                                    District projects)
--   the plan boundary, central wetland seeds,        everything (a full run)
--   Figure 5, parameters, reference tables, the
--   check catalogue, or the checks' SQL itself
--   a dated fact taking effect since the last run    permits measured as of today (undecided)
--   (sql/175: approvals, parameter dates)            and the District projects
--   a date a check reads arriving since the last     the permits it concerns (sql/263:
--   run (checks.dated_check_changes)                 conditions, monitoring, sureties)
-- When more than half of the permits would be rechecked, a full run is cheaper and is made.

-- Which tables were written when: one row per statement that changed rows (not per row: a
-- bulk ingest adds one; a statement that changed nothing, such as the migration's
-- INSERT ... ON CONFLICT DO NOTHING of the parameters, adds none). The statement's rows come
-- from a transition table, which PostgreSQL shares with the change queue's triggers of the
-- same table and event.
CREATE OR REPLACE FUNCTION ops.log_layer_write() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN  -- (refused for every layer; logged should one ever pass)
    INSERT INTO ops.layer_write (table_name) VALUES (TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  ELSIF EXISTS (SELECT 1 FROM written_rows) THEN
    INSERT INTO ops.layer_write (table_name) VALUES (TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME);
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ops.log_layer_write() IS
  'Statement triggers of every core table and the check catalogue: log the table written '
  'when the statement changed rows.';

DO $$
DECLARE
  t regclass;
BEGIN
  FOR t IN
    SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind = 'r'
      AND (n.nspname = 'core' OR (n.nspname = 'checks' AND c.relname = 'rule_check'))
    ORDER BY 1
  LOOP
    EXECUTE format('DROP TRIGGER IF EXISTS layer_write ON %s', t);
    -- transition tables take one event per trigger
    EXECUTE format('DROP TRIGGER IF EXISTS layer_write_insert ON %s', t);
    EXECUTE format('CREATE TRIGGER layer_write_insert AFTER INSERT ON %s '
                   'REFERENCING NEW TABLE AS written_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ops.log_layer_write()', t);
    EXECUTE format('DROP TRIGGER IF EXISTS layer_write_update ON %s', t);
    EXECUTE format('CREATE TRIGGER layer_write_update AFTER UPDATE ON %s '
                   'REFERENCING NEW TABLE AS written_rows FOR EACH STATEMENT '
                   'EXECUTE FUNCTION ops.log_layer_write()', t);
    EXECUTE format('DROP TRIGGER IF EXISTS layer_write_delete ON %s', t);
    EXECUTE format('CREATE TRIGGER layer_write_delete AFTER DELETE ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION ops.log_layer_write()', t);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION checks.recheck_reach_m() RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT 500.0::double precision $$;
COMMENT ON FUNCTION checks.recheck_reach_m() IS
  'How far (m) from a permit''s parcels and features a change makes an incremental check run '
  'evaluate the permit again: well beyond the widest buffer any check measures.';

-- The permits (and District projects) an incremental run must evaluate again, with why.
-- scope: 'all' (a full run is needed), 'permit' (permit_id), 'district' (the District
-- projects). p_since: changes committed at or after this time; p_after: the date the base run
-- measured "today" as.
CREATE OR REPLACE FUNCTION checks.changes_since(p_plan_area_id integer, p_since timestamptz,
                                                p_after date,
                                                p_today date DEFAULT current_date)
RETURNS TABLE (scope text, permit_id bigint, why text)
LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  v_tables text[];
  v_global text[];
  v_dated text[];
  t text;
  v_layer text;
  has_permit boolean;
  has_geom boolean;
  v_reach boolean := false;
  v_cols text;
BEGIN
  SELECT coalesce(array_agg(DISTINCT w.table_name ORDER BY w.table_name), '{}') INTO v_tables
  FROM ops.layer_write w WHERE w.written_at >= p_since;

  -- Changes that can move any permit's result.
  v_global := ARRAY(
    SELECT x FROM unnest(v_tables) x
    WHERE x = ANY (checks.recheck_everything())
       OR x IN ('core.parameter', 'core.susceptibility_limit', 'core.heritage_rank',
                'core.tr55_cover', 'core.plan_area', 'checks.rule_check')
       OR (x LIKE 'core.%' AND x <> 'core.feature'
           AND to_regclass(x) IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                           WHERE a.attrelid = to_regclass(x) AND a.attname = 'valid_from'
                             AND NOT a.attisdropped)));
  IF cardinality(v_global) > 0 THEN
    RETURN QUERY SELECT 'all'::text, NULL::bigint,
                        'written since the run before: ' || array_to_string(v_global, ', ');
    RETURN;
  END IF;
  IF EXISTS (SELECT 1 FROM ops.sql_applied a WHERE a.applied_at >= p_since) THEN
    RETURN QUERY SELECT 'all'::text, NULL::bigint,
                        'the database''s functions were updated (rulem-db db migrate)'::text;
    RETURN;
  END IF;
  -- A core table without the write log (added by a later revision without re-applying this
  -- file) could change unseen: then nothing is assumed.
  SELECT string_agg(c.oid::regclass::text, ', ') INTO t
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'core' AND c.relkind = 'r'
    AND NOT EXISTS (SELECT 1 FROM pg_trigger g
                    WHERE g.tgrelid = c.oid AND g.tgname = 'layer_write_insert');
  IF t IS NOT NULL THEN
    RETURN QUERY SELECT 'all'::text, NULL::bigint, 'tables without a write log: ' || t;
    RETURN;
  END IF;

  DROP TABLE IF EXISTS pg_temp.recheck;
  CREATE TEMP TABLE recheck (scope text, permit_id bigint, why text) ON COMMIT DROP;
  DROP TABLE IF EXISTS pg_temp.all_changed_place;
  CREATE TEMP TABLE all_changed_place (layer text, geom geometry) ON COMMIT DROP;

  -- Days passing: dated facts that took effect since the base run's day (sql/175).
  IF p_after < p_today THEN
    v_dated := ledger.dated_changes(p_plan_area_id, p_after, p_today);
    IF cardinality(v_dated) > 0 THEN
      INSERT INTO recheck
      SELECT 'permit', pm.permit_id,
             format('measured as of today (%s): %s', p_today, array_to_string(v_dated, '; '))
      FROM core.permit pm
      WHERE pm.valid_to IS NULL AND pm.plan_area_id = p_plan_area_id
        AND pm.baseline_on IS NULL AND pm.decided_on IS NULL;
      INSERT INTO recheck VALUES ('district', NULL, array_to_string(v_dated, '; '));
    END IF;
    -- Checks that read the date itself (sql/263: conditions and monitoring years falling due,
    -- observation and release dates arriving).
    INSERT INTO recheck
    SELECT CASE WHEN d.permit_id IS NULL THEN 'district' ELSE 'permit' END, d.permit_id,
           format('as of today (%s): %s', p_today, d.why)
    FROM checks.dated_check_changes(p_plan_area_id, p_after, p_today) d;
  END IF;

  FOREACH t IN ARRAY v_tables LOOP
    CONTINUE WHEN t NOT LIKE 'core.%' OR t = 'core.feature';
    v_layer := split_part(t, '.', 2);
    -- its columns, the geometry as its box: every test of a changed place below is one of
    -- boxes (&&), and copying a wetland complex's thousands of vertices three times cost more
    -- than the rest of the step
    SELECT bool_or(a.attname = 'permit_id'), bool_or(a.attname = 'geom'),
           string_agg(CASE WHEN a.attname = 'geom' THEN 'ST_Envelope(geom) AS geom'
                           ELSE quote_ident(a.attname) END, ', ' ORDER BY a.attnum)
      INTO has_permit, has_geom, v_cols
    FROM pg_catalog.pg_attribute a
    WHERE a.attrelid = t::regclass AND a.attnum > 0 AND NOT a.attisdropped;

    -- versions opened or closed since p_since
    EXECUTE format('CREATE TEMP TABLE changed_rows ON COMMIT DROP AS SELECT %s FROM core.%I '
                   'WHERE plan_area_id = $1 AND (valid_from >= $2 OR valid_to >= $2)',
                   v_cols, v_layer)
      USING p_plan_area_id, p_since;

    IF v_layer = 'permit' THEN
      INSERT INTO recheck SELECT DISTINCT 'permit', c.permit_id, 'permit changed'
      FROM pg_temp.changed_rows c;
      -- 7(b): the permits whose disturbance meets a changed permit's. Ground is charged to
      -- the permit decided first, and their findings name it with its decision date: a
      -- decision, a date or a number that changes moves them, posted or not.
      INSERT INTO recheck
      SELECT DISTINCT 'permit', x.permit_id,
             'a permit whose disturbance meets its own changed (7(b))'
      FROM ledger.disturbance d
      JOIN ledger.disturbance x ON x.geom && d.geom AND x.plan_area_id = p_plan_area_id
                               AND x.permit_id <> d.permit_id
      WHERE d.plan_area_id = p_plan_area_id
        AND d.permit_id IN (SELECT c.permit_id FROM pg_temp.changed_rows c);
    ELSIF v_layer = 'credit_transfer' THEN
      INSERT INTO recheck
      SELECT DISTINCT 'permit', x.pid, 'credit transfer changed'
      FROM pg_temp.changed_rows c
      CROSS JOIN LATERAL (VALUES (c.from_permit_id), (c.to_permit_id)) x (pid)
      WHERE x.pid IS NOT NULL;
    END IF;
    IF has_permit THEN
      EXECUTE format('INSERT INTO pg_temp.recheck SELECT DISTINCT %L, c.permit_id, %L '
                     'FROM pg_temp.changed_rows c WHERE c.permit_id IS NOT NULL',
                     'permit', v_layer || ' of the permit changed');
    END IF;
    IF v_layer = 'replacement' THEN
      INSERT INTO recheck SELECT DISTINCT 'district', NULL::bigint,
                                 'replacement of a District project changed'
      FROM pg_temp.changed_rows c WHERE c.permit_id IS NULL;
    END IF;
    IF v_layer = 'replacement_monitoring' THEN  -- the monitored replacement's owner
      INSERT INTO recheck
      SELECT DISTINCT CASE WHEN r.permit_id IS NULL THEN 'district' ELSE 'permit' END,
             r.permit_id, 'monitoring of a replacement of the '
             || CASE WHEN r.permit_id IS NULL THEN 'District project' ELSE 'permit' END
             || ' changed'
      FROM pg_temp.changed_rows c
      JOIN core.replacement r ON r.replacement_id = c.replacement_id AND r.valid_to IS NULL;
    END IF;
    IF v_layer = 'parcel' THEN  -- (a hash join on the PIN, not a search of each array)
      INSERT INTO recheck
      SELECT DISTINCT 'permit', pm.permit_id, 'a parcel the permit names changed'
      FROM core.permit pm
      CROSS JOIN LATERAL unnest(pm.parcel_pins) n(pin)
      JOIN pg_temp.changed_rows c ON c.pin_normalized = n.pin
      WHERE pm.valid_to IS NULL AND pm.plan_area_id = p_plan_area_id;
    END IF;
    IF v_layer = 'wetland' THEN  -- 5(d) reads the receiving wetland's class and shape
      INSERT INTO recheck
      SELECT DISTINCT 'permit', h.permit_id, 'the receiving wetland of its 5(d) record changed'
      FROM core.hydroperiod h
      WHERE h.valid_to IS NULL AND h.plan_area_id = p_plan_area_id
        AND h.wetland_id IN (SELECT c.wetland_id FROM pg_temp.changed_rows c);
    END IF;

    -- the places that changed (old and new versions), for the permits whose places they reach
    IF has_geom THEN
      INSERT INTO pg_temp.all_changed_place
      SELECT v_layer, c.geom FROM pg_temp.changed_rows c WHERE c.geom IS NOT NULL;
      v_reach := true;
    ELSIF v_layer = 'functional_assessment' THEN  -- 3(e): the wetlands on the parcels
      INSERT INTO pg_temp.all_changed_place
      SELECT v_layer, ST_Envelope(w.geom) FROM pg_temp.changed_rows c
      JOIN core.wetland w ON w.wetland_id = c.wetland_id AND w.valid_to IS NULL;
      v_reach := true;
    END IF;
    DROP TABLE pg_temp.changed_rows;
  END LOOP;

  IF v_reach THEN
    PERFORM checks.recheck_near_changes(p_plan_area_id);
  END IF;

  RETURN QUERY
  SELECT DISTINCT ON (r.scope, r.permit_id) r.scope, r.permit_id, r.why
  FROM pg_temp.recheck r  -- the permit's own change before a neighbour's
  ORDER BY r.scope, r.permit_id, r.why LIKE '%within reach', r.why;
  DROP TABLE pg_temp.recheck;
  DROP TABLE pg_temp.all_changed_place;
END $$;
COMMENT ON FUNCTION checks.changes_since(integer, timestamptz, date, date) IS
  'What an incremental check run must evaluate again since a time: every permit (scope all), '
  'permits (scope permit) or the District projects (scope district), each with why.';

DROP FUNCTION IF EXISTS checks.permit_reach(integer);  -- now checks.recheck_near_changes

-- Which places of a permit a changed feature of each layer can reach, read from what the
-- checks compare it with (docs/checks.md, "Incremental runs"), as the layer catalogue says
-- (ops.layer.recheck, from Layer.recheck in rulem_db/catalogue/layers.py, where each layer's
-- reason is written):
--   site_widen  the permit's site: the box of its parcels widened by this much (m); every
--               window of the buffer checks, the easement and the site's wetland is the
--               parcels widened by checks.reach_m(); NULL: not the site;
--   features    the kinds (layers) of the permit's own features the checks compare the layer
--               with ('*': every kind), widened by feature_widen (m).
-- A layer not listed reaches the site and every own feature widened by
-- checks.recheck_reach_m(), well beyond any distance a check measures. Listed with neither:
-- features only their own permit's checks read (the owner is rechecked for them anyway).
-- Layers whose change makes a full run ({"everything": true}) are not listed.
-- Written out from ops.layer when this file is applied (every file is applied again when a row
-- of ops.layer changes), so the run reads no catalogue table and the writer needs no right on
-- it.
DO $do$
DECLARE
  v_rows text;
  v_everything text;
BEGIN
  SELECT string_agg(format('(%L, %s, %L::text[], %s)', l.layer,
                           CASE WHEN (l.recheck ->> 'site')::boolean THEN 'checks.reach_m()'
                                ELSE 'NULL::float8' END,
                           ARRAY(SELECT jsonb_array_elements_text(l.recheck -> 'features')),
                           CASE WHEN (l.recheck ->> 'near')::boolean
                                THEN 'checks.recheck_reach_m()' ELSE '0::float8' END),
                    E',\n    ' ORDER BY l.position)
    INTO v_rows
  FROM ops.layer l
  WHERE l.recheck IS NOT NULL AND NOT coalesce((l.recheck ->> 'everything')::boolean, false);
  EXECUTE format($f$
CREATE OR REPLACE FUNCTION checks.recheck_places()
RETURNS TABLE (layer text, site_widen double precision, features text[],
               feature_widen double precision)
LANGUAGE sql IMMUTABLE AS $$
  SELECT * FROM (VALUES
    %s) AS v(layer, site_widen, features, feature_widen)
$$ $f$, coalesce(v_rows, '(NULL::text, NULL::float8, NULL::text[], NULL::float8)'));

  SELECT coalesce(string_agg(quote_literal('core.' || l.layer), ', ' ORDER BY l.position), '')
    INTO v_everything
  FROM ops.layer l WHERE (l.recheck ->> 'everything')::boolean;
  EXECUTE format($f$
CREATE OR REPLACE FUNCTION checks.recheck_everything() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ARRAY[%s]::text[] $$ $f$, v_everything);
END $do$;
COMMENT ON FUNCTION checks.recheck_everything() IS
  'The layer tables (core.<layer>) whose change makes an incremental check run a full run: '
  'ops.layer.recheck {"everything": true}, as of when sql/285 was applied.';
COMMENT ON FUNCTION checks.recheck_places() IS
  'For each layer: which places of a permit (its site widened by site_widen m; its own '
  'features of the kinds listed, widened by feature_widen m) a change of the layer reaches.';

-- The network a change of wetland, delineation or ditch touches (6(a)): the current wetlands
-- and ditches connected by touching to the changed places p_start (the boxes of old and new
-- versions, of a delineation's study areas: more than the places, never less), and whether
-- it reaches a central wetland seed. Searched on the
-- features' own geometry: every wetland layer as of any date, and every permit's post-project
-- wetland, is inside it (clipping and fill only take away), so the network of any of them
-- that holds a changed place lies in what is found here. The search stops at a seed: what
-- connects to the change only through a seed is connected to that seed whatever the change.
CREATE OR REPLACE FUNCTION checks.touching_network(p_plan_area_id integer, p_start geometry[],
                                                   OUT wetland_ids bigint[],
                                                   OUT ditch_ids bigint[],
                                                   OUT seeded boolean)
LANGUAGE plpgsql STABLE SET jit = off AS $$
DECLARE
  fg geometry[] := coalesce(p_start, '{}');
  nw bigint[];
  nw_geom geometry[];
  nd bigint[];
  nd_geom geometry[];
BEGIN
  wetland_ids := '{}';
  ditch_ids := '{}';
  seeded := false;
  WHILE cardinality(fg) > 0 LOOP
    seeded := seeded OR EXISTS (
      SELECT 1 FROM unnest(fg) f(g) JOIN core.central_wetland_seed s ON s.geom && f.g
      WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id
        AND ST_Intersects(f.g, s.geom));
    SELECT coalesce(array_agg(x.wetland_id), '{}'), coalesce(array_agg(x.geom), '{}')
      INTO nw, nw_geom
    FROM (SELECT DISTINCT ON (w.wetland_id) w.wetland_id, w.geom
          FROM unnest(fg) f(g) JOIN core.wetland w ON w.geom && f.g
          WHERE w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
            AND w.wetland_id NOT IN (SELECT unnest(wetland_ids))
            AND ST_Intersects(f.g, w.geom)
          ORDER BY w.wetland_id) x;
    SELECT coalesce(array_agg(x.ditch_id), '{}'), coalesce(array_agg(x.geom), '{}')
      INTO nd, nd_geom
    FROM (SELECT DISTINCT ON (d.ditch_id) d.ditch_id, d.geom
          FROM unnest(fg) f(g) JOIN core.ditch d ON d.geom && f.g
          WHERE d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
            AND d.ditch_id NOT IN (SELECT unnest(ditch_ids))
            AND ST_Intersects(f.g, d.geom)
          ORDER BY d.ditch_id) x;
    wetland_ids := wetland_ids || nw;
    ditch_ids := ditch_ids || nd;
    fg := nw_geom || nd_geom;
  END LOOP;
END $$;
COMMENT ON FUNCTION checks.touching_network(integer, geometry[]) IS
  'Current wetlands and ditches connected by touching to some places, and whether the '
  'network reaches a central wetland seed (6(a)).';

-- The permits the changed places (pg_temp.all_changed_place: layer, box of the old or new
-- geometry) of
-- an incremental run reach (checks.recheck_places), and, for wetland, delineation and ditch,
-- those whose central wetland (6(a)) the change can move: added to pg_temp.recheck. Every
-- search goes from the changed places through a spatial index, so the cost follows what
-- changed; only the permits' site boxes are read for all permits, once, when a change reaches
-- sites (a permit's site box is the box of all its parcels, which no index holds).
CREATE OR REPLACE FUNCTION checks.recheck_near_changes(p_plan_area_id integer)
RETURNS void LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  f text;
  net record;
BEGIN
  DROP TABLE IF EXISTS pg_temp.change_rule;
  CREATE TEMP TABLE change_rule ON COMMIT DROP AS
  SELECT c.layer, c.geom,
         CASE WHEN r.layer IS NULL THEN checks.recheck_reach_m() ELSE r.site_widen END
           AS site_widen,
         coalesce(r.features, ARRAY['*']) AS features,
         CASE WHEN r.layer IS NULL THEN checks.recheck_reach_m() ELSE r.feature_widen END
           AS feature_widen
  FROM pg_temp.all_changed_place c LEFT JOIN checks.recheck_places() r ON r.layer = c.layer;

  -- the permits' own features of the kinds each change is compared with
  FOR f IN
    SELECT c.relname::text FROM pg_catalog.pg_class c
    WHERE c.relnamespace = 'core'::regnamespace AND c.relkind = 'r'
      AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                  WHERE a.attrelid = c.oid AND a.attname = 'permit_id' AND NOT a.attisdropped)
      AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                  WHERE a.attrelid = c.oid AND a.attname = 'geom' AND NOT a.attisdropped)
    ORDER BY 1
  LOOP
    CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_temp.change_rule r
                              WHERE f = ANY (r.features) OR '*' = ANY (r.features));
    EXECUTE format(
      'INSERT INTO pg_temp.recheck '
      'SELECT DISTINCT %L, x.permit_id, r.layer || %L '
      'FROM pg_temp.change_rule r JOIN core.%I x '
      '  ON x.geom && ST_Expand(r.geom, r.feature_widen) '
      'WHERE (%L = ANY (r.features) OR %L = ANY (r.features)) AND x.valid_to IS NULL '
      '  AND x.plan_area_id = $1 AND x.permit_id IS NOT NULL',
      'permit', ' changed within reach of its ' || f, f, f, '*')
      USING p_plan_area_id;
  END LOOP;

  -- the permits' sites, when a change reaches sites (or the network below is seeded)
  IF EXISTS (SELECT 1 FROM pg_temp.change_rule r WHERE r.site_widen IS NOT NULL) THEN
    DROP TABLE IF EXISTS pg_temp.site_box;
    CREATE TEMP TABLE site_box ON COMMIT DROP AS
    SELECT pm.permit_id, ST_Extent(pc.geom)::geometry AS box
    FROM core.permit pm
    CROSS JOIN LATERAL unnest(pm.parcel_pins) n(pin)
    JOIN core.parcel pc ON pc.valid_to IS NULL AND pc.plan_area_id = p_plan_area_id
                       AND pc.pin_normalized = n.pin
    WHERE pm.valid_to IS NULL AND pm.plan_area_id = p_plan_area_id
    GROUP BY pm.permit_id;
    CREATE INDEX ON pg_temp.site_box USING gist (box);
    ANALYZE pg_temp.site_box;
    INSERT INTO pg_temp.recheck
    SELECT DISTINCT 'permit', b.permit_id, r.layer || ' changed within reach of its site'
    FROM pg_temp.change_rule r
    JOIN pg_temp.site_box b ON b.box && ST_Expand(r.geom, r.site_widen)
    WHERE r.site_widen IS NOT NULL;

    -- 6(a): a change of wetland, delineation or ditch can connect or cut the network of
    -- wetland that touches it. Its central wetland changes only for a permit near that
    -- network when the network reaches a seed (an unconnected network stays unconnected for
    -- every permit whose own replacement does not touch it: fill only takes wetland away),
    -- and for a permit whose wetland replacement touches it (it may join it to a seed).
    IF EXISTS (SELECT 1 FROM core.central_wetland_seed s
               WHERE s.valid_to IS NULL AND s.plan_area_id = p_plan_area_id)
       AND EXISTS (SELECT 1 FROM pg_temp.change_rule r
                   WHERE r.layer IN ('wetland', 'delineation', 'ditch')) THEN
      SELECT * INTO net FROM checks.touching_network(p_plan_area_id, ARRAY(
        SELECT r.geom FROM pg_temp.change_rule r
        WHERE r.layer IN ('wetland', 'delineation', 'ditch')));
      IF net.seeded THEN
        INSERT INTO pg_temp.recheck
        SELECT 'permit', b.permit_id,
               'connectivity to the central wetland: a changed wetland, delineation or ditch '
               || 'touches the network within reach of its site'
        FROM pg_temp.site_box b
        WHERE EXISTS (SELECT 1 FROM core.wetland w
                      WHERE w.geom && ST_Expand(b.box, checks.reach_m())
                        AND w.valid_to IS NULL AND w.plan_area_id = p_plan_area_id
                        AND w.wetland_id IN (SELECT unnest(net.wetland_ids)))
           OR EXISTS (SELECT 1 FROM core.ditch d
                      WHERE d.geom && ST_Expand(b.box, checks.reach_m())
                        AND d.valid_to IS NULL AND d.plan_area_id = p_plan_area_id
                        AND d.ditch_id IN (SELECT unnest(net.ditch_ids)));
      END IF;
      INSERT INTO pg_temp.recheck
      SELECT DISTINCT 'permit', x.permit_id,
             'connectivity to the central wetland: its replacement touches the network a '
             || 'changed wetland, delineation or ditch touches'
      FROM (SELECT w.geom FROM core.wetland w
            WHERE w.wetland_id IN (SELECT unnest(net.wetland_ids)) AND w.valid_to IS NULL
            UNION ALL
            SELECT d.geom FROM core.ditch d
            WHERE d.ditch_id IN (SELECT unnest(net.ditch_ids)) AND d.valid_to IS NULL
            UNION ALL
            SELECT r.geom FROM pg_temp.change_rule r
            WHERE r.layer IN ('wetland', 'delineation', 'ditch')) n
      JOIN core.replacement x ON x.geom && n.geom
      WHERE x.valid_to IS NULL AND x.plan_area_id = p_plan_area_id
        AND x.permit_id IS NOT NULL AND x.component = 'wetland';
    END IF;
  END IF;
  DROP TABLE pg_temp.change_rule;
END $$;
COMMENT ON FUNCTION checks.recheck_near_changes(integer) IS
  'Adds to pg_temp.recheck the permits whose places the changed places of an incremental '
  'run reach (checks.recheck_places), and those whose central wetland they can move (6(a)).';

-- The permits the checks look at: checks.permit_site's rows without computing their sites
-- (the same condition: current, not denied or withdrawn).
CREATE OR REPLACE FUNCTION checks.permits_in_scope(p_plan_area_id integer)
RETURNS TABLE (permit_id bigint) LANGUAGE sql STABLE AS $$
  SELECT p.permit_id FROM core.permit p
  WHERE p.valid_to IS NULL AND p.plan_area_id = p_plan_area_id
    AND p.status NOT IN ('denied', 'withdrawn')
$$;
COMMENT ON FUNCTION checks.permits_in_scope(integer) IS
  'Ids of the permits the checks look at (as checks.permit_site, without the sites).';

-- What the nightly's check run must do since a base run (the latest finished plan-wide run):
--   plan 'stand'  nothing any check reads changed: the base run's results stand;
--   plan 'full'   a full run (no base run, a plan-wide change, or more than half of the
--                 permits to evaluate again: cheaper than carrying the rest over);
--   plan 'some'   evaluate permit_ids again (and the District projects when district), carry
--                 the other permits' results over (checks.carry_over).
-- why: the reasons, per permit id (or 'all', 'district'), as checks.run.rechecked_why.
-- Refuses a base run that is not the latest plan-wide run.
CREATE OR REPLACE FUNCTION checks.plan_checks_since(p_plan_area_id integer,
                                                    p_base_run_id bigint)
RETURNS TABLE (plan text, why jsonb, permit_ids bigint[], district boolean)
LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  base checks.run;
  in_scope integer;
  c_scope text[];         -- what changed since the base run, as parallel arrays
  c_permit bigint[];
  c_why text[];
BEGIN
  PERFORM checks.bring_ledger_up_to_date(p_plan_area_id);  -- 7(b) on a fresh ledger (sql/282)
  SELECT * INTO base FROM checks.run r
  WHERE r.run_id = p_base_run_id AND r.plan_area_id = p_plan_area_id
    AND r.permit_id IS NULL AND r.finished_at IS NOT NULL;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'full'::text, jsonb_build_object('all', 'no earlier plan-wide check run'),
                        NULL::bigint[], true;
    RETURN;
  END IF;
  -- A later plan-wide run would be the base to use: refuse rather than carry over stale rows.
  IF EXISTS (SELECT 1 FROM checks.run r WHERE r.plan_area_id = p_plan_area_id
               AND r.permit_id IS NULL AND r.run_id > base.run_id) THEN
    RAISE EXCEPTION 'check run % is not the latest plan-wide run of plan area %',
      base.run_id, p_plan_area_id USING HINT = 'Pass the latest plan-wide run as the base.';
  END IF;

  SELECT array_agg(x.scope), array_agg(x.permit_id), array_agg(x.why)
    INTO c_scope, c_permit, c_why
  FROM (SELECT * FROM checks.changes_since(p_plan_area_id,
                                           coalesce(base.changes_since, base.started_at),
                                           base.started_at::date)
        UNION ALL  -- permits checked on their own since: this run's results will replace those
        SELECT 'permit', r.permit_id, format('checked on its own in run %s', max(r.run_id))
        FROM checks.run r
        WHERE r.plan_area_id = p_plan_area_id AND r.permit_id IS NOT NULL
          AND r.run_id > base.run_id
        GROUP BY r.permit_id
        UNION ALL  -- 7(b) reads the posted ledger: the permits (and the plan area's total)
        SELECT DISTINCT   -- whose entries a recompute that ended after the base run began posted
               CASE WHEN l.owner = 0 THEN 'district' ELSE 'permit' END,
               CASE WHEN l.owner = 0 THEN NULL ELSE e.permit_id END,
               CASE WHEN l.owner = 0 THEN 'ledger entries posted: the plan balance'
                    ELSE 'ledger entries posted' END
        FROM ledger.run lr
        JOIN ledger.entry e ON e.run_id = lr.run_id AND e.plan_area_id = p_plan_area_id
        CROSS JOIN (VALUES (0), (1)) l(owner)
        WHERE (lr.finished_at IS NULL OR lr.finished_at >= base.started_at)
          AND (l.owner = 0 OR e.permit_id IS NOT NULL)) x;
  IF c_scope IS NULL THEN
    -- Nothing any check reads changed (the quiet night: no temporary table, no scope read;
    -- the same answer as the test below would give): the base run's results stand.
    RETURN QUERY SELECT 'stand'::text, NULL::jsonb, NULL::bigint[], false;
    RETURN;
  END IF;
  DROP TABLE IF EXISTS pg_temp.check_change;
  CREATE TEMP TABLE check_change ON COMMIT DROP AS
  SELECT * FROM unnest(c_scope, c_permit, c_why) AS c(scope, permit_id, why);

  SELECT count(*) INTO in_scope FROM checks.permits_in_scope(p_plan_area_id);
  SELECT array_agg(DISTINCT c.permit_id ORDER BY c.permit_id) FILTER (
           WHERE c.scope = 'permit' AND c.permit_id IN (
             SELECT s.permit_id FROM checks.permits_in_scope(p_plan_area_id) s)),
         coalesce(bool_or(c.scope = 'district'), false),
         jsonb_object_agg(coalesce(c.permit_id::text, c.scope), c.why)
    INTO permit_ids, district, why
  FROM pg_temp.check_change c;
  IF EXISTS (SELECT 1 FROM pg_temp.check_change c WHERE c.scope = 'all') THEN
    plan := 'full';
    why := jsonb_build_object('all', (SELECT c.why FROM pg_temp.check_change c
                                      WHERE c.scope = 'all' LIMIT 1));
  ELSIF cardinality(permit_ids) > in_scope / 2 THEN
    plan := 'full';
    why := jsonb_build_object('all', format('%s of %s permits changed', cardinality(permit_ids),
                                            in_scope));
  ELSIF permit_ids IS NULL AND NOT district THEN
    -- Nothing any check reads changed, and the permits in scope are those of the base run
    -- (a permit entering or leaving scope is a change of the permit): its results stand.
    plan := 'stand';
  ELSE
    plan := 'some';
    permit_ids := coalesce(permit_ids, '{}');
  END IF;
  IF plan <> 'some' THEN
    permit_ids := NULL;
    district := plan = 'full';
  END IF;
  DROP TABLE pg_temp.check_change;
  RETURN NEXT;
END $$;
COMMENT ON FUNCTION checks.plan_checks_since(integer, bigint) IS
  'What an incremental check run must do since a plan-wide run: stand (the base run''s '
  'results), full, or some (evaluate these permits and carry the others over), with why.';

-- Carry over into run p_run_id what the base run found for every permit in scope that is not
-- in p_permit_ids (and for the District projects and the plan area unless p_district: they
-- were evaluated again). Hashed lookups of the id sets: a search of the arrays per row was
-- two billion comparisons for a state's 500,000 outcomes. Each copied finding names its
-- source (carried_from_id), so the review links it to the source's identity instead of
-- keying it again (checks.review_after_run, sql/287); in the source's order, the order the
-- keys number a permit's like findings in. The outcomes are referred to, not copied
-- (checks.run_permit, revision 0046): a run covers such a permit with the outcomes of the run
-- that last evaluated it, 20,000 rows at state size instead of 1.1 million. The run's
-- findings are copied: the review and staff read a run's findings as its own rows.
CREATE OR REPLACE FUNCTION checks.carry_over(p_run_id bigint, p_plan_area_id integer,
                                             p_base_run_id bigint, p_permit_ids bigint[],
                                             p_district boolean)
RETURNS void LANGUAGE sql VOLATILE SET jit = off AS $$
  INSERT INTO checks.finding (run_id, plan_area_id, paragraph, check_code, severity,
                              permit_id, parcel_id, feature_id, measured_value, limit_value,
                              unit, message, geom, carried_from_id)
  SELECT p_run_id, f.plan_area_id, f.paragraph, f.check_code, f.severity, f.permit_id,
         f.parcel_id, f.feature_id, f.measured_value, f.limit_value, f.unit, f.message, f.geom,
         f.finding_id
  FROM checks.finding f
  WHERE f.run_id = p_base_run_id
    AND ((f.permit_id IS NULL AND NOT p_district)
         OR (f.permit_id NOT IN (SELECT unnest(p_permit_ids))
             AND f.permit_id IN (SELECT s.permit_id
                                 FROM checks.permits_in_scope(p_plan_area_id) s)))
  ORDER BY f.finding_id;
  INSERT INTO checks.run_permit (run_id, permit_id, plan_area_id, outcome_run_id)
  SELECT p_run_id, b.permit_id, b.plan_area_id, b.outcome_run_id
  FROM checks.run_permit b
  WHERE b.run_id = p_base_run_id AND b.permit_id NOT IN (SELECT unnest(p_permit_ids))
    AND b.permit_id IN (SELECT s.permit_id FROM checks.permits_in_scope(p_plan_area_id) s);
$$;
COMMENT ON FUNCTION checks.carry_over(bigint, integer, bigint, bigint[], boolean) IS
  'Carries a base run''s results of the permits in scope not evaluated again into a run: '
  'copies their findings (and the District projects'' unless evaluated again), and covers '
  'them with the outcomes the base run had for them (checks.run_permit).';

-- The nightly's check run: evaluate what changed since the base run, carry over the rest.
-- Returns the run that now holds the plan area's results: the base run itself when nothing
-- changed (no new run is recorded), else a new run. (rulem_db.checks runs the same steps on
-- several sessions with --workers.)
CREATE OR REPLACE FUNCTION checks.run_checks_since(p_plan_area_id integer,
                                                   p_base_run_id bigint)
RETURNS bigint LANGUAGE plpgsql VOLATILE SET jit = off AS $$
DECLARE
  todo record;
  rid bigint;
  started timestamptz := clock_timestamp();  -- deciding what to evaluate is the run's work
BEGIN
  SELECT * INTO todo FROM checks.plan_checks_since(p_plan_area_id, p_base_run_id);
  IF todo.plan = 'stand' THEN
    RETURN p_base_run_id;
  ELSIF todo.plan = 'full' THEN
    RETURN checks.run_checks(p_plan_area_id, NULL, todo.why);
  END IF;
  rid := checks.start_run(p_plan_area_id, NULL, p_base_run_id, todo.why, started);
  PERFORM checks.evaluate(p_plan_area_id, todo.permit_ids, todo.district);
  PERFORM checks.record_evaluations(rid, p_plan_area_id, todo.permit_ids, todo.district);
  DROP TABLE pg_temp.check_evaluation;
  PERFORM checks.carry_over(rid, p_plan_area_id, p_base_run_id, todo.permit_ids,
                            todo.district);
  UPDATE checks.run SET rechecked_count = cardinality(todo.permit_ids) WHERE run_id = rid;
  PERFORM checks.finish_run(rid);
  RETURN rid;
END $$;
COMMENT ON FUNCTION checks.run_checks_since(integer, bigint) IS
  'The nightly''s check run: evaluates the permits whose inputs changed since a plan-wide '
  'run and carries the other permits'' findings and outcomes over (a full run when the '
  'change is plan-wide or touches most permits; the base run itself when nothing changed).';

REVOKE ALL ON FUNCTION ops.log_layer_write(), checks.changes_since(integer, timestamptz, date,
  date), checks.recheck_places(), checks.touching_network(integer, geometry[]),
  checks.recheck_near_changes(integer), checks.run_checks_since(integer, bigint),
  checks.plan_checks_since(integer, bigint),
  checks.carry_over(bigint, integer, bigint, bigint[], boolean),
  checks.permits_in_scope(integer), checks.recheck_reach_m(), checks.recheck_everything()
  FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ops.log_layer_write(), checks.changes_since(integer, timestamptz,
  date, date), checks.recheck_places(), checks.touching_network(integer, geometry[]),
  checks.recheck_near_changes(integer), checks.run_checks_since(integer, bigint),
  checks.plan_checks_since(integer, bigint),
  checks.carry_over(bigint, integer, bigint, bigint[], boolean),
  checks.recheck_reach_m(), checks.permits_in_scope(integer), checks.recheck_everything()
  TO rulem_etl;
GRANT INSERT ON ops.layer_write TO rulem_etl;
GRANT SELECT ON ops.layer_write TO rulem_etl;
