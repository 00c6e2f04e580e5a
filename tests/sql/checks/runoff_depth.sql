-- pub.runoff_depth_in, the TR-55 runoff depth staff use for 5(c) (sql/230, docs/checks.md):
-- Q = (P - 0.2S)^2 / (P + 0.8S) with S = 1000/CN - 10, and 0 while P <= 0.2S.
--
-- Worked by hand at P = 2.8 in (docs/checks.md: 2.569, 1.102, 0.784, 0.292, 0):
--   CN 98: S = 0.2041, (2.8 - 0.0408)^2 / (2.8 + 0.1633) = 7.6131 / 2.9633 = 2.569
--   CN 80: S = 2.5,    (2.8 - 0.5)^2    / (2.8 + 2.0)    = 5.29 / 4.8      = 1.102
--   CN 74: S = 3.5135, (2.8 - 0.7027)^2 / (2.8 + 2.8108) = 4.3987 / 5.6108 = 0.784
--   CN 61: S = 6.3934, (2.8 - 1.2787)^2 / (2.8 + 5.1148) = 2.3144 / 7.9148 = 0.292
--   CN 39: S = 15.641, 0.2S = 3.128 > 2.8: all rain is initial abstraction  = 0
-- At CN 80 (0.2S = 0.5): P = 0.5 gives 0; P = 0.6 gives 0.01 / 2.6 = 0.0038; P = 5.0 gives
-- 4.5^2 / 7.0 = 2.893 (TR-55 Table 2-1: 2.89).

SET ROLE rulem_staff;

SELECT cn, round(pub.runoff_depth_in(2.8, cn), 3) AS q_in
FROM unnest(ARRAY[98, 80, 74, 61, 39]) AS cn
ORDER BY cn DESC;

SELECT pub.runoff_depth_in(0.5, 80) AS at_initial_abstraction,
       round(pub.runoff_depth_in(0.6, 80), 4) AS just_above,
       round(pub.runoff_depth_in(5.0, 80), 3) AS five_inches,
       pub.runoff_depth_in(NULL, 80) AS rain_not_given;

-- refused in one line each
SELECT pub.runoff_depth_in(2.8, 0);
SELECT pub.runoff_depth_in(2.8, 101);
SELECT pub.runoff_depth_in(-1, 80);

RESET ROLE;
