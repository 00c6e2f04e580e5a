-- 105_ledger_wetland_pieces: the current wetlands cut into pieces of at most 128 vertices
-- (ST_Subdivide), kept in ledger.wetland_piece by triggers on core.wetland.
-- Why: real wetland complexes have thousands of vertices (NWI: up to 3,560 in one DC polygon)
-- and span many parcels and permits; overlaying a 50 m fill with the whole complex costs
-- GEOS time in proportion to the complex, with its pieces only to the few pieces it meets.
-- A new version (INSERT, also the one the versioning trigger opens on UPDATE) gets its pieces;
-- a closed version (UPDATE that retires or supersedes it) loses them.

CREATE OR REPLACE FUNCTION ledger.cut_wetland_pieces() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO ledger.wetland_piece (plan_area_id, wetland_id, version_id, delineation_id, geom)
    SELECT a.plan_area_id, a.wetland_id, a.version_id, a.delineation_id, d.geom
    FROM added a
    CROSS JOIN LATERAL ST_Subdivide(a.geom, 128) AS s(g)
    CROSS JOIN LATERAL ST_Dump(s.g) d
    WHERE a.valid_to IS NULL;
  ELSE
    DELETE FROM ledger.wetland_piece p
    USING added a
    WHERE p.version_id = a.version_id AND a.valid_to IS NOT NULL;
  END IF;
  RETURN NULL;
END $$;
COMMENT ON FUNCTION ledger.cut_wetland_pieces() IS
  'Trigger (core.wetland): pieces for each new version, none for closed versions.';

DROP TRIGGER IF EXISTS ledger_wetland_pieces_insert ON core.wetland;
CREATE TRIGGER ledger_wetland_pieces_insert AFTER INSERT ON core.wetland
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT
  EXECUTE FUNCTION ledger.cut_wetland_pieces();
DROP TRIGGER IF EXISTS ledger_wetland_pieces_update ON core.wetland;
CREATE TRIGGER ledger_wetland_pieces_update AFTER UPDATE ON core.wetland
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT
  EXECUTE FUNCTION ledger.cut_wetland_pieces();

-- Wetlands loaded before these triggers existed (this file is applied again after changes).
INSERT INTO ledger.wetland_piece (plan_area_id, wetland_id, version_id, delineation_id, geom)
SELECT w.plan_area_id, w.wetland_id, w.version_id, w.delineation_id, d.geom
FROM core.wetland w
CROSS JOIN LATERAL ST_Subdivide(w.geom, 128) AS s(g)
CROSS JOIN LATERAL ST_Dump(s.g) d
WHERE w.valid_to IS NULL
  AND NOT EXISTS (SELECT 1 FROM ledger.wetland_piece p WHERE p.version_id = w.version_id);
DELETE FROM ledger.wetland_piece p
WHERE NOT EXISTS (SELECT 1 FROM core.wetland w
                  WHERE w.version_id = p.version_id AND w.valid_to IS NULL);

REVOKE ALL ON FUNCTION ledger.cut_wetland_pieces() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ledger.cut_wetland_pieces() TO rulem_etl;
GRANT SELECT, INSERT, DELETE ON ledger.wetland_piece TO rulem_etl;
