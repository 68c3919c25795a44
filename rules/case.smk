# One case: the mpmath reference (no framework), each back end's evaluations with the
# exact edges of each outcome (one framework start per case and back end), and the
# comparison that judges them all and states the findings.


rule compute_reference:
    input:
        case="cases/{case}.yaml",
        code=stage_sources("reference"),
    output:
        "results/{case}/reference.parquet",
    params:
        study=stage_settings(config, "reference"),
    log:
        "logs/{case}/compute_reference.log",
    benchmark:
        "logs/{case}/compute_reference.benchmark.tsv"
    resources:
        mem_mb=1000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness reference {input.case} --results results --study {params.study:q} > {log} 2>&1"


rule evaluate_case:
    input:
        case="cases/{case}.yaml",
        # The evaluation judges the points it evaluates to find the exact edges of each
        # outcome (harness.bisection), so it needs the reference.
        reference="results/{case}/reference.parquet",
        code=lambda w: stage_sources("evaluate", backend=w.backend),
    output:
        evaluations="results/{case}/{backend}/evaluations.parquet",
        edges="results/{case}/{backend}/edges.parquet",
    params:
        study=stage_settings(config, "evaluate"),
    log:
        "logs/{case}/evaluate_case.{backend}.log",
    benchmark:
        "logs/{case}/evaluate_case.{backend}.benchmark.tsv"
    threads: 1
    # Measured peaks: under 1 GB per case in the quick setting; in the full setting
    # 13.8 GB (ratio: TensorFlow's forward mode at order 4 through a division); see
    # README, Speed.
    priority: CASE_PRIORITY
    resources:
        mem_mb=evaluate_mem_mb(config),
    conda:
        "../environment.yml"
    shell:
        "python -m harness evaluate {input.case} --backends {wildcards.backend} --results results --threads {threads} --study {params.study:q} > {log} 2>&1"


rule compare_case:
    input:
        case="cases/{case}.yaml",
        reference="results/{case}/reference.parquet",
        evaluations=backend_files(config, "evaluations"),
        edges=backend_files(config, "edges"),
        code=stage_sources("compare"),
    output:
        errors="results/{case}/errors.parquet",
        # The case's summary rows and findings, read by collect_results and
        # render_case_page.
        summary="results/{case}/summary.parquet",
        findings="results/{case}/findings.parquet",
    params:
        study=stage_settings(config, "compare"),
    log:
        "logs/{case}/compare_case.log",
    benchmark:
        "logs/{case}/compare_case.benchmark.tsv"
    priority: CASE_PRIORITY
    resources:
        mem_mb=1000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness compare {input.case} --results results --study {params.study:q} > {log} 2>&1"
