-- 020_reference_data: tables of fact that the rule and TR-55 fix. Idempotent upserts.

INSERT INTO core.heritage_rank (rank, ordinal) VALUES
  ('A', 1), ('AB', 2), ('B', 3), ('BC', 4), ('C', 5), ('CD', 6), ('D', 7), ('unranked', 8)
ON CONFLICT (rank) DO UPDATE SET ordinal = EXCLUDED.ordinal;

-- TR-55 (NRCS 1986) Table 2-2a, urban areas, and Table 2-2c, other agricultural lands.
INSERT INTO core.tr55_cover (cover_class, description, cn_a, cn_b, cn_c, cn_d) VALUES
  ('impervious',          'Impervious areas: paved parking lots, roofs, driveways', 98, 98, 98, 98),
  ('street_paved',        'Streets and roads: paved; curbs and storm sewers', 98, 98, 98, 98),
  ('street_gravel',       'Streets and roads: gravel (including right-of-way)', 76, 85, 89, 91),
  ('street_dirt',         'Streets and roads: dirt (including right-of-way)', 72, 82, 87, 89),
  ('open_space_poor',     'Open space, poor condition (grass cover < 50%)', 68, 79, 86, 89),
  ('open_space_fair',     'Open space, fair condition (grass cover 50% to 75%)', 49, 69, 79, 84),
  ('open_space_good',     'Open space, good condition (grass cover > 75%)', 39, 61, 74, 80),
  ('commercial',          'Urban districts: commercial and business (85% impervious)', 89, 92, 94, 95),
  ('industrial',          'Urban districts: industrial (72% impervious)', 81, 88, 91, 93),
  ('residential_1_8ac',   'Residential, 1/8 acre lots or less (65% impervious)', 77, 85, 90, 92),
  ('residential_1_4ac',   'Residential, 1/4 acre lots (38% impervious)', 61, 75, 83, 87),
  ('residential_1_3ac',   'Residential, 1/3 acre lots (30% impervious)', 57, 72, 81, 86),
  ('residential_1_2ac',   'Residential, 1/2 acre lots (25% impervious)', 54, 70, 80, 85),
  ('residential_1ac',     'Residential, 1 acre lots (20% impervious)', 51, 68, 79, 84),
  ('residential_2ac',     'Residential, 2 acre lots (12% impervious)', 46, 65, 77, 82),
  ('newly_graded',        'Newly graded areas (pervious areas only, no vegetation)', 77, 86, 91, 94),
  ('meadow',              'Meadow: continuous grass, protected from grazing, mowed for hay', 30, 58, 71, 78),
  ('brush_good',          'Brush-weed-grass mixture, brush the major element, good', 30, 48, 65, 73),
  ('woods_grass_good',    'Woods-grass combination (orchard or tree farm), good', 32, 58, 72, 79),
  ('woods_poor',          'Woods, poor hydrologic condition', 45, 66, 77, 83),
  ('woods_fair',          'Woods, fair hydrologic condition', 36, 60, 73, 79),
  ('woods_good',          'Woods, good hydrologic condition', 30, 55, 70, 77),
  ('pasture_good',        'Pasture, grassland or range, good condition', 39, 61, 74, 80),
  ('water',               'Open water and wetland surface (treated as impervious)', 98, 98, 98, 98)
ON CONFLICT (cover_class) DO UPDATE SET
  description = EXCLUDED.description, cn_a = EXCLUDED.cn_a, cn_b = EXCLUDED.cn_b,
  cn_c = EXCLUDED.cn_c, cn_d = EXCLUDED.cn_d;
