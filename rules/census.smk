# The kernel census (harness.census): every operator of the table in each framework's own
# kernel, over its whole domain. Its case files are written from the operator table when
# the workflow is read (a file is rewritten only when its text changes), then each goes
# through the study's own rules, with census/cases/ and results/census/ in place of
# cases/ and results/ (the rules' params follow from their outputs). `snakemake census`
# runs it; the default study does not.

CENSUS_CASES = census_cases(config, "census/cases")


use rule compute_reference as census_reference with:
    input:
        case="census/cases/{case}.yaml",
        code=stage_sources("reference"),
    output:
        "results/census/{case}/reference.parquet",
        timings="results/census/{case}/reference.timings.parquet",
    log:
        "logs/census/{case}/compute_reference.log",
    benchmark:
        "logs/census/{case}/compute_reference.benchmark.tsv"


use rule evaluate_case as census_evaluate with:
    input:
        case="census/cases/{case}.yaml",
        reference="results/census/{case}/reference.parquet",
        code=lambda w: stage_sources("evaluate", backend=w.backend),
    output:
        evaluations="results/census/{case}/{backend}/{piece}/evaluations.parquet",
        edges="results/census/{case}/{backend}/{piece}/edges.parquet",
        localised="results/census/{case}/{backend}/{piece}/localised.parquet",
        timings="results/census/{case}/{backend}/{piece}/timings.parquet",
    log:
        "logs/census/{case}/evaluate_case.{backend}.{piece}.log",
    benchmark:
        "logs/census/{case}/evaluate_case.{backend}.{piece}.benchmark.tsv"
    priority: 0


use rule compare_case as census_compare with:
    input:
        case="census/cases/{case}.yaml",
        reference="results/census/{case}/reference.parquet",
        evaluations=backend_files(config, "evaluations", "census/cases", "results/census"),
        edges=backend_files(config, "edges", "census/cases", "results/census"),
        localised=backend_files(config, "localised", "census/cases", "results/census"),
        code=stage_sources("compare"),
    output:
        errors="results/census/{case}/errors.parquet",
        summary="results/census/{case}/summary.parquet",
        findings="results/census/{case}/findings.parquet",
    log:
        "logs/census/{case}/compare_case.log",
    benchmark:
        "logs/census/{case}/compare_case.benchmark.tsv"
    priority: 0


# The census's root causes, as the study's (`harness collect`), and each one's standalone
# script run in every framework it affects (`harness repro`).
ruleorder: census_collect > compare_case


rule census_collect:
    input:
        errors=expand("results/census/{case}/errors.parquet", case=CENSUS_CASES),
        summaries=expand("results/census/{case}/summary.parquet", case=CENSUS_CASES),
        findings=expand("results/census/{case}/findings.parquet", case=CENSUS_CASES),
        code=stage_sources("collect"),
    output:
        summary="results/census/summary.parquet",
        findings="results/census/findings.parquet",
        root_causes="results/census/root_causes.parquet",
        root_causes_csv="results/census/root_causes.csv",
    log:
        "logs/census/collect.log",
    benchmark:
        "logs/census/collect.benchmark.tsv"
    resources:
        mem_mb=3000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness collect {input.errors} --results results/census > {log} 2>&1"


rule census_reproduce:
    input:
        root_causes="results/census/root_causes.parquet",
        findings="results/census/findings.parquet",
        cases=expand("census/cases/{case}.yaml", case=CENSUS_CASES),
        code=lambda w: stage_sources("reproduce", backend=w.backend),
    output:
        "results/census/reproducers/{backend}.parquet",
    params:
        study=stage_settings(config, "compare"),
    log:
        "logs/census/reproduce.{backend}.log",
    benchmark:
        "logs/census/reproduce.{backend}.benchmark.tsv"
    resources:
        mem_mb=2000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness repro --backend {wildcards.backend} --results results/census --cases census/cases --study {params.study:q} > {log} 2>&1"


# The atlas and the page; the study's root causes (results/, where the study has run) name
# the seed cases that share each census root cause.
rule census_atlas:
    input:
        summaries=expand("results/census/{case}/summary.parquet", case=CENSUS_CASES),
        root_causes="results/census/root_causes.parquet",
        reproducers=expand("results/census/reproducers/{backend}.parquet", backend=BACKENDS),
        code=stage_sources("census"),
    output:
        atlas="results/census/atlas.parquet",
        csv="results/census/atlas.csv",
        causes="results/census/causes.parquet",
        page="reports/census.html",
    log:
        "logs/census/atlas.log",
    benchmark:
        "logs/census/atlas.benchmark.tsv"
    resources:
        mem_mb=2000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness census --results results/census --cases census/cases --reports reports --study results > {log} 2>&1"


rule census:
    input:
        "results/census/atlas.parquet",
        "reports/census.html",
