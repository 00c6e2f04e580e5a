"""What one ingest was asked to do: the layer, the file and the options, checked together.

Why apart from the steps: every later step (reading, validating, building the spec, the
merge) reads the same few decisions made here once (which layer the file's features go to, the
mapping file, whether the file is one delineation's wetlands), and an option that cannot go
with the layer is refused here, before the file is opened.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etl.fields import Mapping, layer_of, load_mapping
from etl.problems import refuse
from etl.sources import file_sha256
from rulem_db.catalogue.layers import BY_NAME, Layer


@dataclass(frozen=True)
class Request:
    """The options of one ingest, checked (etl.ingest.ingest documents them)."""

    url: str
    path: Path
    layer: Layer  # the layer named on the command line
    # "delineation" for `ingest delineation FILE` (one delineation's wetlands: docs/ingest.md,
    # "Delineations"), else "layer"
    mode: str
    target: Layer  # the layer the file's features go to (wetland for a delineation)
    mapping: Mapping
    source_layer: str | None
    crs_given: str | None
    permit: str | None
    study_area: Path | None
    skip: bool
    records: bool
    delineation_no: str | None
    plan_area: str | None

    @classmethod
    def make(cls, url: str, layer: str, path: Path, *, crs: str | None, mapping: Path | None,
             permit: str | None, study_area: Path | None, skip: bool,
             delineation: str | None, records: bool, source_layer: str | None,
             plan_area: str | None) -> Request:
        """The request, or a refusal of options that do not go with the layer or of a mapping
        file that is malformed or made for another layer."""
        lyr = layer_of(layer)
        mode = "delineation" if lyr.name == "delineation" and not records else "layer"
        target = BY_NAME["wetland"] if mode == "delineation" else lyr
        _check_options(path.name, lyr, mode, target, permit, study_area, delineation)
        parsed = load_mapping(mapping)
        if parsed.layer and parsed.layer not in (lyr.name, target.name):
            raise refuse(parsed.path.name if parsed.path else path.name,
                         f"the mapping file is for layer {parsed.layer}, not {lyr.name}")
        return cls(url=url, path=path, layer=lyr, mode=mode, target=target, mapping=parsed,
                   source_layer=source_layer or parsed.source_layer, crs_given=crs,
                   permit=permit, study_area=study_area, skip=skip, records=records,
                   delineation_no=delineation, plan_area=plan_area)

    @property
    def file(self) -> str:
        """The file's name, as every problem names it."""
        return self.path.name

    def as_records(self) -> Request:
        """`ingest delineation` of a CSV without geometry: delineation records (status
        changes, TEP findings) for the delineation layer itself."""
        return dataclasses.replace(self, mode="layer", target=self.layer, records=True)

    def options(self, sha: str) -> dict[str, Any]:
        """The options of this ingest as ops.batch records them; the fingerprint says when two
        ingests are the same, the scope key which earlier batch a duplicate is looked up in."""
        mapping_sha = hashlib.sha256(self.mapping.text.encode()).hexdigest() \
            if self.mapping.path else None
        study_sha = file_sha256(self.study_area) if self.study_area else None
        same = {"mode": self.mode, "crs": self.crs_given, "mapping_sha256": mapping_sha,
                "permit": self.permit, "delineation": self.delineation_no,
                "source_layer": self.source_layer, "study_area_sha256": study_sha}
        scope = f"{self.mode}|{self.permit or ''}|{self.delineation_no or ''}"
        if self.mode == "delineation" and not self.delineation_no:
            scope += f"|{sha}"  # a new delineation each time: the file itself is the scope
        return {**same, "mapping": self.mapping.path.name if self.mapping.path else None,
                "study_area": self.study_area.name if self.study_area else None,
                "skip_bad_features": self.skip, "scope_key": scope,
                "fingerprint": hashlib.sha256(json.dumps(same, sort_keys=True).encode())
                .hexdigest()}


def _check_options(file: str, layer: Layer, mode: str, target: Layer, permit: str | None,
                   study_area: Path | None, delineation: str | None) -> None:
    names = {c.name for c in target.columns}
    if permit and "permit_id" not in names and mode != "delineation":
        raise refuse(file, f"--permit was given, but layer {layer.name} has no permit")
    if study_area and mode != "delineation":
        raise refuse(file, "--study-area goes with `ingest delineation FILE` only")
    if delineation and mode != "delineation" and target.name != "wetland":
        raise refuse(file, "--delineation goes with the delineation and wetland layers")
