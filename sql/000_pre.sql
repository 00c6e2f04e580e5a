-- 000_pre: helpers every later file uses. Idempotent.

CREATE OR REPLACE FUNCTION ops.working_srid() RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE AS
$$ SELECT value::integer FROM ops.setting WHERE key = 'srid' $$;
COMMENT ON FUNCTION ops.working_srid() IS
  'The working CRS (EPSG code) of this database, fixed at rulem-db db init.';

CREATE OR REPLACE FUNCTION ops.current_batch() RETURNS bigint
LANGUAGE sql STABLE AS
$$ SELECT nullif(current_setting('rulem.batch_id', true), '')::bigint $$;
COMMENT ON FUNCTION ops.current_batch() IS
  'The ingest batch this session works for (SET LOCAL rulem.batch_id), or NULL for a user''s edit.';

CREATE OR REPLACE FUNCTION ops.refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%.% is append-only: % is not allowed', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'Add a new row (for a parameter: a new effective date) instead.';
END $$;
COMMENT ON FUNCTION ops.refuse_change() IS
  'Trigger: refuses UPDATE, DELETE and TRUNCATE on append-only tables.';

-- Acres from square metres of the working CRS (1 acre = 4046.8564224 m^2, the international acre).
CREATE OR REPLACE FUNCTION core.acres(g geometry) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (ST_Area(g) / 4046.8564224)::numeric $$;
COMMENT ON FUNCTION core.acres(geometry) IS
  'Planar area of a geometry in the working CRS, in acres (1 acre = 4046.8564224 m^2).';
