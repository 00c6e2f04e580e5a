-- 025_pin_display: the one form a PIN is shown in.
-- Anoka County PINs are 12 digits: section, township, range, quarter and quarter-quarter,
-- parcel (313223110001). Delivered files write them with dashes, spaces or nothing; people read
-- them as NN-NN-NN-NN-NNNN (31-32-23-11-0001). A PIN whose letters and digits are not exactly
-- 12 digits (another county's scheme, a typo, Cambridge's map-lot "127-123") is shown as
-- delivered: reformatting what we do not understand would hide it.
-- Letters and digits are ASCII ones here and in the twin, so both read every PIN alike.
-- Mirrored by rulem_db/pins.py (pin_display), which tests hold to this function.
-- Published views call it (the grants in sql/998 let their readers execute it).
-- One expression without FROM and not STRICT (a CASE is not provably strict), so the planner
-- inlines it: pub.parcel_balance's
-- `WHERE pin = '31-32-23-11-0001'` then uses the index on core.pin_display(pin) (revision 0025,
-- which creates this same function first: an index needs its function). Changing what it
-- returns changes that index's meaning: such a change needs a revision that re-creates the
-- function and REINDEXes core.ix_parcel_pin_display in the same step.

CREATE OR REPLACE FUNCTION core.pin_display(p_pin text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN regexp_replace(p_pin, '[^0-9A-Za-z]', '', 'g') ~ '^[0-9]{12}$'
              THEN regexp_replace(regexp_replace(p_pin, '[^0-9A-Za-z]', '', 'g'),
                                  '^(..)(..)(..)(..)(....)$', '\1-\2-\3-\4-\5')
              ELSE p_pin END
$$;
COMMENT ON FUNCTION core.pin_display(text) IS
  'A PIN as shown in every published table, CSV, report and map label: NN-NN-NN-NN-NNNN when '
  'its letters and digits are exactly 12 digits (Anoka County), else as delivered.';
