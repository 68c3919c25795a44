# The study: every case in cases/ end to end. (One job per case for now; the staged
# pipeline with collected tables and reports replaces this rule.)
from pathlib import Path

from snakemake.utils import min_version

min_version("8.0")

CASES = sorted(p.stem for p in Path("cases").glob("*.yaml"))


rule all:
    input:
        expand("results/{case}/errors.parquet", case=CASES),


rule run_case:
    input:
        case="cases/{case}.yaml",
    output:
        reference="results/{case}/reference.parquet",
        evaluations="results/{case}/evaluations.parquet",
        errors="results/{case}/errors.parquet",
    log:
        "logs/{case}.log",
    conda:
        "environment.yml"
    shell:
        "python -m harness run {input.case} --results results > {log} 2>&1"
