-- 940_layer_styles: a default QGIS style for every published map layer, in QGIS's own
-- public.layer_styles table (revision 0006), so that a layer added from the database browser
-- opens styled: balances by status, findings by severity (pub.severity_style, the palette
-- every client shares), buffer transects by pass or fail, wetland by whether its delineation
-- is approved, and so on; parcels, impacts, replacement areas and findings labelled (PIN in
-- display form, permit number, check code) at site scale only, 1:1 to 1:10,000.
--
-- How QGIS finds a row (QGIS 3.22, postgres provider): f_table_catalog = the database's name,
-- f_table_schema / f_table_name = the layer, f_geometry_column = its geometry column, and type
-- NULL or the geometry type given in the layer's URI (Point, Line, Polygon). So the catalog is
-- current_database() when seeded, type is NULL for views of one geometry type and set for
-- views of mixed type (pub.finding: one row per geometry type, for URIs with
-- type=Point|Line|Polygon). A database restored or copied under another name keeps rows for
-- its old name, which QGIS ignores: run SELECT ops.seed_layer_styles() there (the migration
-- step re-seeds only when a sql file changed).
--
-- The styles are generated from rules (ops.layer_style_rule) rather than stored as QML text,
-- so a colour is one value here, a view added later by the ledger or the checks gets a style
-- (its own rules when they exist, a neutral one otherwise), and the history views share their
-- layer's look. Rows seeded here are named 'rulem-db default'; re-seeding replaces only them,
-- and they are the default only where nobody has saved another default style for the layer.

-- A colour for QGIS ('r,g,b,a') from '#rrggbb' and an alpha 0-255.
CREATE OR REPLACE FUNCTION ops.qml_color(p_hex text, p_alpha integer DEFAULT 255)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT format('%s,%s,%s,%s', ('x' || substr(p_hex, 2, 2))::bit(8)::integer,
                ('x' || substr(p_hex, 4, 2))::bit(8)::integer,
                ('x' || substr(p_hex, 6, 2))::bit(8)::integer, p_alpha)
$$;
COMMENT ON FUNCTION ops.qml_color(text, integer) IS
  'QGIS colour text r,g,b,a from #rrggbb and an alpha (0-255).';

CREATE OR REPLACE FUNCTION ops.xml_attr(p text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT replace(replace(replace(replace(p, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
                 '"', '&quot;')
$$;
COMMENT ON FUNCTION ops.xml_attr(text) IS 'Text escaped for an XML attribute value.';

-- The severity palette: error red, warning orange, info blue, the same in QGIS (the finding
-- rules below read it), the report maps and tables (rulem_db/reports/palette.py, held to this
-- view by tests/publish/test_publish_look.py) and the web, which reads it here.
CREATE OR REPLACE VIEW pub.severity_style AS
  SELECT * FROM (VALUES
    ('error', 1, 'Error', '#d7191c', 'circle'),
    ('warning', 2, 'Warning', '#d95f02', 'triangle'),
    ('info', 3, 'Info', '#2166ac', 'square')
  ) AS s(severity, rank, label, colour, marker);
COMMENT ON VIEW pub.severity_style IS
  'The colour of each finding severity, the same in the QGIS default styles, the report maps '
  'and tables and the web: error red, warning orange, info blue.';
COMMENT ON COLUMN pub.severity_style.severity IS 'Finding severity (pub.finding.severity).';
COMMENT ON COLUMN pub.severity_style.rank IS 'Order of severity, 1 the most severe.';
COMMENT ON COLUMN pub.severity_style.label IS 'The word a legend shows.';
COMMENT ON COLUMN pub.severity_style.colour IS
  'Colour as #rrggbb (each contrasts with white at least 3:1, red and blue 4.5:1).';
COMMENT ON COLUMN pub.severity_style.marker IS
  'QGIS marker shape of a point finding (circle, triangle, square), so severities differ in '
  'shape as well as colour.';

-- The look of each layer. One row per rule; a rule draws the features matching its filter (a
-- QGIS expression; NULL: every feature; 'ELSE': those no other rule drew). attr names the
-- column the filter reads: when a view lacks it, the layer gets the neutral style instead of
-- rules that would match nothing. Colours are ColorBrewer schemes where a scheme fits.
-- fill NULL: no fill; pattern: solid, b_diagonal, f_diagonal or diagonal_x (hatching in the
-- fill colour); line: solid, dash or dot; width in mm (outline, or the line); size in mm
-- (markers); shape: circle, square, triangle, cross (markers).
CREATE OR REPLACE FUNCTION ops.layer_style_rule()
RETURNS TABLE (layer text, pos integer, attr text, label text, filter text, fill text,
               alpha integer, pattern text, outline text, width numeric, line text,
               size numeric, shape text)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT * FROM (VALUES
    ('cwmp_area', 1, NULL, 'CWMP plan area', NULL, NULL, 0, 'solid', '#000000', 0.8, 'solid', NULL::numeric, NULL),
    ('central_wetland_seed', 1, NULL, 'Central wetland complex (as mapped)', NULL, '#08519c', 255, 'b_diagonal', '#08519c', 0.5, 'dash', NULL, NULL),
    ('parcel', 1, NULL, 'Parcel', NULL, NULL, 0, 'solid', '#737373', 0.26, 'solid', NULL, NULL),
    ('delineation', 1, 'status', 'Approved', '"status" = ''approved''', NULL, 0, 'solid', '#1a9641', 0.6, 'solid', NULL, NULL),
    ('delineation', 2, 'status', 'TEP reviewed', '"status" = ''tep_reviewed''', NULL, 0, 'solid', '#fdae61', 0.6, 'dash', NULL, NULL),
    ('delineation', 3, 'status', 'Submitted', '"status" = ''submitted''', NULL, 0, 'solid', '#f46d43', 0.6, 'dash', NULL, NULL),
    ('delineation', 4, 'status', 'Rejected', '"status" = ''rejected''', NULL, 0, 'solid', '#969696', 0.4, 'dot', NULL, NULL),
    ('wetland', 1, 'delineation_status', 'Approved delineation (counts)', '"delineation_status" = ''approved''', '#3182bd', 150, 'solid', '#08519c', 0.3, 'solid', NULL, NULL),
    ('wetland', 2, 'delineation_status', 'Under review (does not count yet)', '"delineation_status" IN (''submitted'', ''tep_reviewed'')', '#6baed6', 255, 'b_diagonal', '#6baed6', 0.4, 'dash', NULL, NULL),
    ('wetland', 3, 'delineation_status', 'Rejected delineation', 'ELSE', NULL, 0, 'solid', '#969696', 0.3, 'dot', NULL, NULL),
    ('wetland_history', 1, NULL, 'Wetland (any delineation, any version)', NULL, '#3182bd', 110, 'solid', '#08519c', 0.3, 'solid', NULL, NULL),
    ('ditch', 1, 'status', 'Active', '"status" = ''active''', NULL, 0, 'solid', '#08306b', 0.8, 'solid', NULL, NULL),
    ('ditch', 2, 'status', 'Partially abandoned', '"status" = ''partially_abandoned''', NULL, 0, 'solid', '#2171b5', 0.6, 'dash', NULL, NULL),
    ('ditch', 3, 'status', 'Abandoned', '"status" = ''abandoned''', NULL, 0, 'solid', '#6baed6', 0.5, 'dot', NULL, NULL),
    ('heritage_area', 1, 'rank', 'Rank B/C or better: protected (7(c)(i)-(ii))', '"rank" IN (''A'', ''AB'', ''B'', ''BC'')', '#7b3294', 120, 'solid', '#40004b', 0.4, 'solid', NULL, NULL),
    ('heritage_area', 2, 'rank', 'Below rank B/C', 'ELSE', '#c2a5cf', 100, 'solid', '#9970ab', 0.3, 'solid', NULL, NULL),
    ('figure5_area', 1, NULL, 'Figure 5 replacement zone', NULL, '#33a02c', 255, 'f_diagonal', '#33a02c', 0.5, 'solid', NULL, NULL),
    ('soil', 1, 'hydrologic_soil_group', 'A', '"hydrologic_soil_group" = ''A''', '#ffffd4', 100, 'solid', NULL, 0, 'solid', NULL, NULL),
    ('soil', 2, 'hydrologic_soil_group', 'B', '"hydrologic_soil_group" = ''B''', '#fed98e', 100, 'solid', NULL, 0, 'solid', NULL, NULL),
    ('soil', 3, 'hydrologic_soil_group', 'C', '"hydrologic_soil_group" = ''C''', '#fe9929', 100, 'solid', NULL, 0, 'solid', NULL, NULL),
    ('soil', 4, 'hydrologic_soil_group', 'D', '"hydrologic_soil_group" = ''D''', '#cc4c02', 100, 'solid', NULL, 0, 'solid', NULL, NULL),
    ('soil', 5, 'hydrologic_soil_group', 'Dual group (A/D, B/D, C/D: counted as D)', 'ELSE', '#8c6bb1', 100, 'solid', NULL, 0, 'solid', NULL, NULL),
    ('impact', 1, 'kind', 'Fill', '"kind" = ''fill''', '#bf812d', 190, 'solid', '#67001f', 0.3, 'solid', NULL, NULL),
    ('impact', 2, 'kind', 'Excavation', '"kind" = ''excavate''', '#a6611a', 190, 'solid', '#543005', 0.3, 'solid', NULL, NULL),
    ('impact', 3, 'kind', 'Drained (full)', '"kind" = ''drain_full''', '#e66101', 190, 'solid', '#7f2704', 0.3, 'solid', NULL, NULL),
    ('impact', 4, 'kind', 'Drained (partial)', '"kind" = ''drain_partial''', '#fdb863', 190, 'solid', '#7f2704', 0.3, 'dash', NULL, NULL),
    ('replacement', 1, 'component', 'Upland in replacement area (no credit)', '"component" = ''upland''', '#bababa', 150, 'solid', '#636363', 0.3, 'solid', NULL, NULL),
    ('replacement', 2, 'status', 'Certified replacement wetland', '"status" = ''certified''', '#01665e', 170, 'solid', '#003c30', 0.4, 'solid', NULL, NULL),
    ('replacement', 3, 'status', 'Constructed (not yet certified)', '"status" = ''constructed''', '#5ab4ac', 170, 'solid', '#01665e', 0.4, 'dash', NULL, NULL),
    ('replacement', 4, 'status', 'Proposed', 'ELSE', '#01665e', 255, 'b_diagonal', '#01665e', 0.4, 'dash', NULL, NULL),
    ('buffer', 1, NULL, 'Declared buffer (6)', NULL, '#d9f0a3', 140, 'solid', '#4d9221', 0.3, 'solid', NULL, NULL),
    ('trail', 1, NULL, 'Trail (6(f)(iv))', NULL, '#8c510a', 200, 'solid', '#543005', 0.2, 'solid', NULL, NULL),
    ('buffer_marker', 1, 'marker_type', 'Free-standing marker', '"marker_type" = ''free_standing''', '#000000', 255, 'solid', '#ffffff', 0.3, 'solid', 2.4, 'circle'),
    ('buffer_marker', 2, 'marker_type', 'Flush marker', '"marker_type" = ''flush''', '#525252', 255, 'solid', '#ffffff', 0.3, 'solid', 2.4, 'square'),
    ('buffer_marker', 3, 'marker_type', 'Breakaway marker', 'ELSE', '#969696', 255, 'solid', '#000000', 0.3, 'solid', 2.6, 'triangle'),
    ('easement', 1, NULL, 'Easement to the District (8)', NULL, NULL, 0, 'solid', '#762a83', 0.6, 'dash', NULL, NULL),
    ('impervious', 1, 'condition', 'Existing impervious', '"condition" = ''existing''', '#636363', 180, 'solid', '#252525', 0.2, 'solid', NULL, NULL),
    ('impervious', 2, 'condition', 'Proposed impervious', 'ELSE', '#f03b20', 160, 'solid', '#99000d', 0.2, 'solid', NULL, NULL),
    ('grading', 1, 'alters_runoff_to_wetland', 'Grading that alters runoff into CWMP wetland (2(a)(iii))', '"alters_runoff_to_wetland"', '#d95f0e', 255, 'diagonal_x', '#d95f0e', 0.4, 'dash', NULL, NULL),
    ('grading', 2, 'alters_runoff_to_wetland', 'Other grading', 'ELSE', '#fdae6b', 255, 'f_diagonal', '#fdae6b', 0.3, 'dash', NULL, NULL),
    ('structure', 1, 'kind', 'Road', '"kind" = ''road''', '#252525', 220, 'solid', '#000000', 0.2, 'solid', NULL, NULL),
    ('structure', 2, 'kind', 'Utility', '"kind" = ''utility''', '#756bb1', 220, 'solid', '#3f007d', 0.2, 'solid', NULL, NULL),
    ('structure', 3, 'kind', 'Passive recreation or education', '"kind" IN (''passive_recreation'', ''education'')', '#41ab5d', 220, 'solid', '#00441b', 0.2, 'solid', NULL, NULL),
    ('structure', 4, 'kind', 'Other structure', 'ELSE', '#969696', 220, 'solid', '#252525', 0.2, 'solid', NULL, NULL),
    ('land_cover', 1, NULL, 'Proposed land cover (TR-55)', NULL, '#fff7bc', 110, 'solid', '#bdbdbd', 0.2, 'solid', NULL, NULL),
    ('subwatershed', 1, NULL, 'Subwatershed', NULL, NULL, 0, 'solid', '#2b8cbe', 0.6, 'dash', NULL, NULL),
    ('bmp', 1, 'kind', 'Infiltration', '"kind" = ''infiltration''', '#41b6c4', 200, 'solid', '#225ea8', 0.3, 'solid', NULL, NULL),
    ('bmp', 2, 'kind', 'Pretreatment', '"kind" = ''pretreatment''', '#a1dab4', 200, 'solid', '#41b6c4', 0.3, 'solid', NULL, NULL),
    ('bmp', 3, 'kind', 'Biofiltration', '"kind" = ''biofiltration''', '#2c7fb8', 200, 'solid', '#081d58', 0.3, 'solid', NULL, NULL),
    ('bmp', 4, 'kind', 'Wet pond', 'ELSE', '#253494', 200, 'solid', '#081d58', 0.3, 'solid', NULL, NULL),
    ('species_record', 1, NULL, 'Protected species record (restricted)', NULL, '#e7298a', 170, 'solid', '#67001f', 0.3, 'solid', 2.4, 'circle'),
    -- Ledger: balance status colours.
    ('parcel_balance', 1, 'status', 'Deficit (credit below required)', '"status" = ''deficit''', '#c51b7d', 120, 'solid', '#67001f', 0.3, 'solid', NULL, NULL),
    ('parcel_balance', 2, 'status', 'Balanced', '"status" = ''balanced''', '#fee08b', 120, 'solid', '#737373', 0.3, 'solid', NULL, NULL),
    ('parcel_balance', 3, 'status', 'Surplus', '"status" = ''surplus''', '#1a9641', 120, 'solid', '#00441b', 0.3, 'solid', NULL, NULL),
    ('parcel_balance', 4, 'status', 'No impact or credit', 'ELSE', NULL, 0, 'solid', '#bdbdbd', 0.2, 'solid', NULL, NULL),
    ('plan_balance', 1, 'status', 'Plan area in deficit', '"status" = ''deficit''', NULL, 0, 'solid', '#c51b7d', 1.0, 'solid', NULL, NULL),
    ('plan_balance', 2, 'status', 'Plan area balanced', '"status" = ''balanced''', NULL, 0, 'solid', '#fee08b', 1.0, 'solid', NULL, NULL),
    ('plan_balance', 3, 'status', 'Plan area in surplus', '"status" = ''surplus''', NULL, 0, 'solid', '#1a9641', 1.0, 'solid', NULL, NULL),
    ('plan_balance', 4, 'status', 'No impact or credit', 'ELSE', NULL, 0, 'solid', '#737373', 1.0, 'solid', NULL, NULL),
    -- Checks: buffer transects and subwatershed volumes by pass or fail (findings: below).
    ('buffer_transect', 1, 'outcome', 'Transect fails: narrower than the minimum (6(c))', '"outcome" = ''fail''', '#d7191c', 255, 'solid', '#d7191c', 0.6, 'solid', NULL, NULL),
    ('buffer_transect', 2, 'outcome', 'Transect passes (6(c))', 'ELSE', '#1a9641', 255, 'solid', '#1a9641', 0.3, 'solid', NULL, NULL),
    ('stormwater_volume', 1, 'outcome', 'Subwatershed short of 5(c) volume', '"outcome" = ''fail''', NULL, 0, 'solid', '#d7191c', 0.8, 'dash', NULL, NULL),
    ('stormwater_volume', 2, 'outcome', 'Subwatershed meets 5(c)', 'ELSE', NULL, 0, 'solid', '#1a9641', 0.6, 'dash', NULL, NULL)
  ) AS r(layer, pos, attr, label, filter, fill, alpha, pattern, outline, width, line, size, shape)
  UNION ALL
  -- Findings by severity in the palette's colours (hatched, so the features at fault show
  -- through); the last severity takes whatever the others did not draw.
  SELECT 'finding', s.rank, 'severity', s.label,
         CASE WHEN s.rank = max(s.rank) OVER () THEN 'ELSE'
              ELSE format('"severity" = %L', s.severity) END,
         s.colour, 255, 'f_diagonal', s.colour,
         CASE WHEN s.rank = max(s.rank) OVER () THEN 0.6 ELSE 0.8 END, 'solid',
         CASE WHEN s.rank = max(s.rank) OVER () THEN 2.6 ELSE 3.0 END, s.marker
  FROM pub.severity_style s
$$;
COMMENT ON FUNCTION ops.layer_style_rule() IS
  'The default look of each published layer: the rules sql/940_layer_styles.sql turns into '
  'QGIS styles in public.layer_styles.';

-- One QGIS symbol of a kind (fill, line, marker) drawn the way a rule says.
CREATE OR REPLACE FUNCTION ops.qml_symbol(p_kind text, p_name integer, p_fill text,
                                          p_alpha integer, p_pattern text, p_outline text,
                                          p_width numeric, p_line text, p_size numeric,
                                          p_shape text)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT format('<symbol type="%s" name="%s" alpha="1" clip_to_extent="1" force_rhr="0">'
                '<layer class="%s" enabled="1" pass="0" locked="0">%s</layer></symbol>',
                p_kind, p_name,
                CASE p_kind WHEN 'fill' THEN 'SimpleFill' WHEN 'line' THEN 'SimpleLine'
                            ELSE 'SimpleMarker' END,
                CASE p_kind
                  WHEN 'fill' THEN
                    format('<prop k="color" v="%s"/><prop k="style" v="%s"/>'
                           '<prop k="outline_color" v="%s"/><prop k="outline_style" v="%s"/>'
                           '<prop k="outline_width" v="%s"/><prop k="outline_width_unit" v="MM"/>'
                           '<prop k="joinstyle" v="miter"/>',
                           ops.qml_color(coalesce(p_fill, '#000000'),
                                         CASE WHEN p_fill IS NULL THEN 0 ELSE p_alpha END),
                           CASE WHEN p_fill IS NULL THEN 'no' ELSE p_pattern END,
                           ops.qml_color(coalesce(p_outline, '#000000')),
                           CASE WHEN p_outline IS NULL THEN 'no' ELSE p_line END,
                           coalesce(p_width, 0.26))
                  WHEN 'line' THEN
                    format('<prop k="line_color" v="%s"/><prop k="line_style" v="%s"/>'
                           '<prop k="line_width" v="%s"/><prop k="line_width_unit" v="MM"/>'
                           '<prop k="capstyle" v="round"/><prop k="joinstyle" v="round"/>',
                           ops.qml_color(coalesce(p_outline, p_fill, '#000000')),
                           coalesce(p_line, 'solid'),
                           greatest(coalesce(p_width, 0.4), 0.26))
                  ELSE
                    format('<prop k="name" v="%s"/><prop k="color" v="%s"/>'
                           '<prop k="outline_color" v="%s"/><prop k="outline_style" v="solid"/>'
                           '<prop k="outline_width" v="%s"/><prop k="size" v="%s"/>'
                           '<prop k="size_unit" v="MM"/>',
                           coalesce(p_shape, 'circle'),
                           ops.qml_color(coalesce(p_fill, p_outline, '#000000')),
                           ops.qml_color(coalesce(p_outline, '#ffffff')),
                           least(coalesce(p_width, 0.2), 0.4), coalesce(p_size, 2.4))
                END)
$$;
COMMENT ON FUNCTION ops.qml_symbol(text, integer, text, integer, text, text, numeric, text,
                                   numeric, text) IS
  'A QGIS symbol (QML) of kind fill, line or marker, from a style rule.';

-- Labels at site scale: which column labels a layer, and down to which scale (the largest
-- scale denominator) the labels show. Parcels by their PIN in display form (sql/025), impacts
-- and replacement areas by their permit, findings by their check; beyond 1:10,000 the labels
-- would hide the map, so they show only from 1:1 to 1:10,000. A layer whose view lacks the
-- column is drawn without labels.
CREATE OR REPLACE FUNCTION ops.layer_label_rule()
RETURNS TABLE (layer text, field text, max_scale integer)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  VALUES ('parcel', 'pin_display', 10000), ('parcel_balance', 'pin', 10000),
         ('impact', 'permit_no', 10000), ('replacement', 'permit_no', 10000),
         ('finding', 'check_code', 10000)
$$;
COMMENT ON FUNCTION ops.layer_label_rule() IS
  'The column that labels each published layer in its QGIS default style, and the largest '
  'scale denominator at which the labels show (site scale: 1:1 to 1:10,000).';

-- The QGIS labeling element of a layer drawn as p_kind, or '' when it has no label rule or
-- its view lacks the column. Dark text with a white halo, readable on every fill; placed at
-- the centroid of an area, along a line, around a point.
CREATE OR REPLACE FUNCTION ops.qml_labeling(p_layer text, p_kind text, p_has_attrs text[])
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce((
    SELECT format('<labeling type="simple"><settings calloutType="simple">'
                  '<text-style fieldName="%s" isExpression="0" fontFamily="Sans Serif" '
                  'namedStyle="Regular" fontSize="8" fontSizeUnit="Point" fontWeight="50" '
                  'fontItalic="0" textColor="%s" textOpacity="1" multilineHeight="1">'
                  '<text-buffer bufferDraw="1" bufferSize="0.8" bufferSizeUnits="MM" '
                  'bufferColor="%s" bufferOpacity="0.9" bufferNoFill="1" bufferJoinStyle="128"/>'
                  '</text-style><text-format wrapChar="" multilineAlign="3"/>'
                  '<placement placement="%s" dist="%s" distUnits="MM" priority="5" '
                  'centroidInside="1" centroidWhole="0" fitInPolygonOnly="0" '
                  'placementFlags="10" overrunDistance="0" overrunDistanceUnit="MM"/>'
                  '<rendering scaleVisibility="1" scaleMin="1" scaleMax="%s" obstacle="1" '
                  'displayAll="0" upsidedownLabels="0" labelPerPart="0" mergeLines="0" '
                  'limitNumLabels="0" maxNumLabels="2000" minFeatureSize="0" drawLabels="1" '
                  'fontLimitPixelSize="0" fontMinPixelSize="3" fontMaxPixelSize="10000"/>'
                  '</settings></labeling>',
                  ops.xml_attr(r.field), ops.qml_color('#252525'), ops.qml_color('#ffffff'),
                  CASE p_kind WHEN 'marker' THEN 0 WHEN 'line' THEN 2 ELSE 1 END,
                  CASE p_kind WHEN 'marker' THEN 1.5 ELSE 0 END, r.max_scale)
    FROM ops.layer_label_rule() r
    WHERE r.layer = p_layer AND r.field = ANY (p_has_attrs)), '')
$$;
COMMENT ON FUNCTION ops.qml_labeling(text, text, text[]) IS
  'The QGIS labeling element (QML) of a layer''s default style: its label column at site '
  'scale (ops.layer_label_rule), or empty.';

-- The style document of a layer drawn as p_kind (fill, line, marker) from its rules.
CREATE OR REPLACE FUNCTION ops.qml_style(p_layer text, p_kind text, p_has_attrs text[])
RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  r record;
  rules text := '';
  symbols text := '';
  renderer text;
  labeling text;
  n integer := 0;
  use_rules boolean;
BEGIN
  SELECT count(*) > 0 AND bool_and(attr IS NULL OR attr = ANY (p_has_attrs)) INTO use_rules
  FROM ops.layer_style_rule() WHERE layer = p_layer;
  FOR r IN
    SELECT * FROM ops.layer_style_rule() WHERE layer = p_layer AND use_rules
    UNION ALL
    -- The neutral look of a layer without rules (or whose view lacks a column they read).
    SELECT p_layer, 1, NULL, initcap(replace(p_layer, '_', ' ')), NULL, '#9e9e9e', 90, 'solid',
           '#525252', 0.3, 'solid', 2.2, 'circle'
    WHERE NOT use_rules
    ORDER BY 2
  LOOP
    symbols := symbols || ops.qml_symbol(p_kind, n, r.fill, r.alpha, r.pattern, r.outline,
                                         r.width, r.line, r.size, r.shape);
    rules := rules || format('<rule key="{rulem-%s-%s}" symbol="%s" label="%s"%s/>',
                             p_layer, r.pos, n, ops.xml_attr(r.label),
                             CASE WHEN r.filter IS NULL THEN ''
                                  ELSE format(' filter="%s"', ops.xml_attr(r.filter)) END);
    n := n + 1;
  END LOOP;
  renderer := format('<renderer-v2 type="RuleRenderer" symbollevels="0" forceraster="0" '
                     'enableorderby="0" referencescale="-1"><rules key="{rulem-%s-root}">%s'
                     '</rules><symbols>%s</symbols></renderer-v2>', p_layer, rules, symbols);
  labeling := ops.qml_labeling(p_layer, p_kind, p_has_attrs);
  RETURN '<!DOCTYPE qgis PUBLIC ''http://mrcc.com/qgis.dtd'' ''SYSTEM''>'
      || format('<qgis version="3.22.0" styleCategories="Symbology|Labeling" labelsEnabled="%s">',
                CASE WHEN labeling = '' THEN 0 ELSE 1 END)
      || renderer || labeling
      || '<blendMode>0</blendMode><featureBlendMode>0</featureBlendMode>'
      || format('<layerGeometryType>%s</layerGeometryType>',
                CASE p_kind WHEN 'marker' THEN 0 WHEN 'line' THEN 1 ELSE 2 END)
      || '</qgis>';
END $$;
COMMENT ON FUNCTION ops.qml_style(text, text, text[]) IS
  'QGIS style document (QML, rule-based renderer and site-scale labels) of a layer drawn as '
  'fill, line or marker.';

CREATE OR REPLACE FUNCTION ops.seed_layer_styles() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v record;
  k record;
  n integer := 0;
  attrs text[];
  base text;
  doc text;
BEGIN
  DELETE FROM public.layer_styles WHERE stylename = 'rulem-db default';
  FOR v IN
    SELECT g.f_table_schema::text AS schema_name, g.f_table_name::text AS view_name,
           g.f_geometry_column::text AS geom_col, upper(g.type) AS gtype
    FROM geometry_columns g
    JOIN pg_class c ON c.relname = g.f_table_name
    JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = g.f_table_schema
    WHERE g.f_table_schema IN ('pub', 'restricted') AND c.relkind IN ('v', 'm')
    ORDER BY 1, 2
  LOOP
    -- A view's own rules, else those of the layer it is the history of.
    base := CASE WHEN EXISTS (SELECT 1 FROM ops.layer_style_rule() r WHERE r.layer = v.view_name)
                 THEN v.view_name ELSE regexp_replace(v.view_name, '_history$', '') END;
    SELECT array_agg(a.attname::text) INTO attrs FROM pg_attribute a
    WHERE a.attrelid = format('%I.%I', v.schema_name, v.view_name)::regclass AND a.attnum > 0
      AND NOT a.attisdropped;
    doc := obj_description(format('%I.%I', v.schema_name, v.view_name)::regclass, 'pg_class');
    FOR k IN
      SELECT * FROM (VALUES ('marker', 'Point', ARRAY['POINT', 'MULTIPOINT']),
                            ('line', 'Line', ARRAY['LINESTRING', 'MULTILINESTRING']),
                            ('fill', 'Polygon', ARRAY['POLYGON', 'MULTIPOLYGON'])) t(kind, qgis_type, types)
      WHERE v.gtype = ANY (t.types) OR v.gtype IN ('GEOMETRY', 'GEOMETRYCOLLECTION')
    LOOP
      INSERT INTO public.layer_styles (f_table_catalog, f_table_schema, f_table_name,
        f_geometry_column, stylename, styleqml, stylesld, useasdefault, description, owner,
        update_time, type)
      SELECT current_database(), v.schema_name, v.view_name, v.geom_col, 'rulem-db default',
             XMLPARSE(DOCUMENT ops.qml_style(base, k.kind, attrs)), NULL,
             NOT EXISTS (SELECT 1 FROM public.layer_styles s
                         WHERE s.f_table_catalog = current_database()
                           AND s.f_table_schema = v.schema_name
                           AND s.f_table_name = v.view_name AND s.useasdefault
                           AND s.stylename <> 'rulem-db default'),
             left('rulem-db default style. ' || coalesce(doc, ''), 1000), current_user,
             now()::timestamp,
             CASE WHEN v.gtype IN ('GEOMETRY', 'GEOMETRYCOLLECTION') THEN k.qgis_type END;
      n := n + 1;
    END LOOP;
  END LOOP;
  RETURN n;
END $$;
COMMENT ON FUNCTION ops.seed_layer_styles() IS
  'Writes the rulem-db default QGIS style of every published map layer into '
  'public.layer_styles for this database (replacing the earlier ones); returns the rows '
  'written. Run it after restoring or copying the database under another name.';

SELECT ops.seed_layer_styles();
