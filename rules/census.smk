# The kernel census (harness.census): every operator of the table in each framework's own
# kernel, over its whole domain. Its case files are written from the operator table when
# the workflow is read (a file is rewritten only when its text changes), then go through
# the study's stages in batches, with census/cases/ and results/census/ in place of
# cases/ and results/. `snakemake census` runs it; the default study does not.

CENSUS_CASES = census_cases(config, "census/cases")
# The cases in a few batches, each kernel's layouts together (harness.workflow.census):
# per batch two reference jobs, one evaluation job per framework (or per framework and
# dtype: the census block's `split`) and two comparison jobs, each a single process over
# its case files.
CENSUS_BATCHES = census_batches(config, CENSUS_CASES, "census/cases")


for batch, members in CENSUS_BATCHES.items():
    # The references in two jobs a batch, the first batch's before everything else: both
    # cores start on them, and its evaluations begin as soon as they are done, whichever
    # batch's references would have finished first (harness.workflow.census).
    for part, referenced in census_parts(members, 2).items():

        rule:
            name:
                f"census_reference_{batch}_{part}"
            input:
                cases=expand("census/cases/{case}.yaml", case=referenced),
                code=stage_sources_of("reference"),
            output:
                tables=expand("results/census/{case}/reference.parquet", case=referenced),
                timings=expand(
                    "results/census/{case}/reference.timings.parquet", case=referenced
                ),
            params:
                study=census_settings(config, "reference"),
            log:
                f"logs/census/{batch}/reference.{part}.log",
            benchmark:
                f"logs/census/{batch}/reference.{part}.benchmark.tsv"
            priority: census_priority(CENSUS_BATCHES, batch, BACKENDS, "reference")
            resources:
                mem_mb=census_mem_mb(config, "reference"),
            conda:
                "../environment.yml"
            shell:
                "python -m harness reference {input.cases} --results results/census --study {params.study:q} > {log} 2>&1"

    for backend in BACKENDS:
        # One job per back end, or per back end and piece where the census block has a
        # `split` (the quick census: one per dtype, harness.workflow.census).
        for piece, evaluated in census_evaluate_jobs(config, members, backend).items():
            job = backend if piece is None else f"{backend}.{piece}"

            rule:
                name:
                    f"census_evaluate_{batch}_{job.replace('.', '_')}"
                input:
                    cases=expand("census/cases/{case}.yaml", case=evaluated),
                    references=expand(
                        "results/census/{case}/reference.parquet", case=evaluated
                    ),
                    code=stage_sources_of("evaluate", backend),
                output:
                    **census_evaluations(config, evaluated, backend, piece=piece),
                params:
                    study=census_settings(config, "evaluate", backend),
                    backend=backend,
                    piece="" if piece is None else f"--piece {piece}",
                log:
                    f"logs/census/{batch}/evaluate.{job}.log",
                benchmark:
                    f"logs/census/{batch}/evaluate.{job}.benchmark.tsv"
                threads: 1
                # The first batch first (its comparison then runs beside the next batches'
                # evaluations), and in a batch the study's back ends in its order
                # (TensorFlow's jobs, first in config/study.yaml, are the longest).
                priority: census_priority(CENSUS_BATCHES, batch, BACKENDS, backend)
                # The evaluating process grows with the kernels it has traced (the census
                # block's evaluate_mem_mb: config/study.yaml).
                resources:
                    mem_mb=census_mem_mb(config, "evaluate"),
                conda:
                    "../environment.yml"
                shell:
                    "python -m harness evaluate {input.cases} --backends {params.backend} {params.piece} --results results/census --threads {threads} --study {params.study:q} > {log} 2>&1"

    # The comparison in two jobs a batch, so that the last batch's runs on both cores.
    for part, judged in census_parts(members, 2).items():

        rule:
            name:
                f"census_compare_{batch}_{part}"
            input:
                cases=expand("census/cases/{case}.yaml", case=judged),
                references=expand("results/census/{case}/reference.parquet", case=judged),
                evaluations=[
                    f
                    for b in BACKENDS
                    for name, files in census_evaluations(config, judged, b).items()
                    if name != "timings"
                    for f in files
                ],
                code=stage_sources_of("compare"),
            output:
                errors=expand("results/census/{case}/errors.parquet", case=judged),
                summaries=expand("results/census/{case}/summary.parquet", case=judged),
                findings=expand("results/census/{case}/findings.parquet", case=judged),
            params:
                study=census_settings(config, "compare"),
            # Before the next batch's evaluations (harness.workflow.census).
            priority: census_priority(CENSUS_BATCHES, batch, BACKENDS, None)
            log:
                f"logs/census/{batch}/compare.{part}.log",
            benchmark:
                f"logs/census/{batch}/compare.{part}.benchmark.tsv"
            resources:
                mem_mb=census_mem_mb(config, "compare"),
            conda:
                "../environment.yml"
            shell:
                "python -m harness compare {input.cases} --results results/census --study {params.study:q} > {log} 2>&1"


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
        mem_mb=census_mem_mb(config, "collect"),
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
        mem_mb=census_mem_mb(config, "reproduce"),
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
        bills="results/census/clean_bills.parquet",
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
