# The study: every case in cases/ through reference -> evaluate -> compare, then the
# collected summary and the HTML report. Rules are wiring; the logic lives in the harness package.
from pathlib import Path

from snakemake.utils import min_version

from harness.workflow import (
    backend_files,
    backend_pattern,
    check_config,
    discover_cases,
    evaluate_mem_mb,
    job_priority,
    piece_settings,
    stage_settings,
    stage_sources,
    stage_sources_of,
    study_backends,
)
from harness.workflow.census import (
    census_batches,
    census_cases,
    census_evaluate_jobs,
    census_evaluations,
    census_mem_mb,
    census_parts,
    census_priority,
    census_settings,
)

min_version("8.0")


configfile: "config/study.yaml"


check_config(config)

# Cases that validate feed the summary; broken ones still get their own (failing) jobs,
# so `snakemake --keep-going` finishes everything else and the log says what is wrong.
CASES, BROKEN = discover_cases("cases")
# Costliest cases first (their evaluation, comparison and page), so the longest chain
# does not start last.
CASE_PRIORITY = job_priority(config)
# The frameworks installed here: each reproduces the root causes it shares.
BACKENDS = study_backends(config)


wildcard_constraints:
    case="[A-Za-z][A-Za-z0-9_-]*",
    backend=backend_pattern(),
    piece="[A-Za-z0-9_.]+",


include: "rules/case.smk"
include: "rules/study.smk"
include: "rules/census.smk"
include: "rules/repair.smk"


rule all:
    input:
        expand("results/{case}/errors.parquet", case=CASES + BROKEN),
        "results/summary.parquet",
        "results/summary.csv",
        "reports/index.html",
        "reports/frameworks.html",
