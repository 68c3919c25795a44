# Repairs (issue 59): for each case, the implementations its formula and rule root causes
# name, repaired (harness repair: candidates judged by the study's own stages, the best
# written as code per framework and checked bit for bit). Its own target, `snakemake
# repairs`, so that the default study stays as fast as it is.


rule repair_case:
    input:
        root_causes="results/root_causes.parquet",
        case="cases/{case}.yaml",
        code=lambda w: sorted(
            {p for b in BACKENDS for p in stage_sources("repair", backend=b)}
        ),
    output:
        table="results/repairs/{case}.parquet",
        code=directory("results/repairs/{case}"),
    log:
        "logs/{case}/repair_case.log",
    benchmark:
        "logs/{case}/repair_case.benchmark.tsv"
    resources:
        mem_mb=4000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness repair {input.case} --causes {input.root_causes} "
        "--table {output.table} --code {output.code} -q > {log} 2>&1"


rule render_repairs:
    input:
        tables=expand("results/repairs/{case}.parquet", case=CASES),
        code=stage_sources("repairs_page"),
    output:
        "reports/repairs.html",
    log:
        "logs/render_repairs.log",
    benchmark:
        "logs/render_repairs.benchmark.tsv"
    resources:
        mem_mb=1000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness report --repairs --results results --reports reports > {log} 2>&1"


rule repairs:
    input:
        expand("results/repairs/{case}.parquet", case=CASES),
        "reports/repairs.html",
