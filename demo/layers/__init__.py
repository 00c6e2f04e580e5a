"""The demo's layers, one module per theme, each making its layers' features into a
``Collector`` (demo/collector.py): frame (plan area, central wetland seed, parcels), context
(soils, heritage areas, Figure 5 zones), wetlands (delineations, wetlands, functional
assessments), ditches, permits, impacts (impacts and replacements), buffers (buffers, trails,
markers, structures), declarations (declarations, easements), stormwater (impervious, grading,
land cover, subwatersheds, BMPs, hydroperiods), plan_records (credit transfers, the District's
project, a species record), monitoring (sureties, conditions of issuance, monitoring years) and
records (permit records).

Why by layer: a change to one kind of feature is made in one module, and the order the builders
run in (which fixes every key and random draw) is written once, in demo/generate.py's ``build``.
"""
