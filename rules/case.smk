# One case: the mpmath reference (no framework), each back end's evaluations with the
# exact edges of each outcome (one job, one framework start, per case, back end and piece:
# the study's `split` setting, see harness.stages.pieces), and the comparison that judges them
# all and states the findings.


rule compute_reference:
    input:
        case="cases/{case}.yaml",
        code=stage_sources("reference"),
    output:
        "results/{case}/reference.parquet",
        # What differs from run to run (seconds, the cache's share), kept apart so that
        # two runs write byte-identical result tables.
        timings="results/{case}/reference.timings.parquet",
    params:
        study=stage_settings(config, "reference"),
        # The results folder, from the output (the census's rules reuse this one).
        results=lambda w, output: Path(output[0]).parents[1],
    log:
        "logs/{case}/compute_reference.log",
    benchmark:
        "logs/{case}/compute_reference.benchmark.tsv"
    resources:
        mem_mb=1000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness reference {input.case} --results {params.results} --study {params.study:q} > {log} 2>&1"


rule evaluate_case:
    input:
        case="cases/{case}.yaml",
        # The evaluation judges the points it evaluates to find the exact edges of each
        # outcome (harness.edges.bisection), so it needs the reference.
        reference="results/{case}/reference.parquet",
        code=lambda w: stage_sources("evaluate", backend=w.backend),
    output:
        evaluations="results/{case}/{backend}/{piece}/evaluations.parquet",
        edges="results/{case}/{backend}/{piece}/edges.parquet",
        # Each failing value's primitives judged at the arguments they receive there
        # (harness.causes.localise): the root causes' evidence.
        localised="results/{case}/{backend}/{piece}/localised.parquet",
        timings="results/{case}/{backend}/{piece}/timings.parquet",
    params:
        # The settings this piece depends on (harness.workflow.piece_settings): adding a
        # back end to the study adds its jobs and reruns none of these.
        study=lambda w: piece_settings(config, w.backend, w.piece),
        results=lambda w, output: Path(output[0]).parents[3],
    log:
        "logs/{case}/evaluate_case.{backend}.{piece}.log",
    benchmark:
        "logs/{case}/evaluate_case.{backend}.{piece}.benchmark.tsv"
    threads: 1
    # Measured peaks: under 1.4 GB per case in the quick setting; per piece of the full
    # setting up to 4.7 GB (ratio, float32.forward: TensorFlow's nested forward mode at
    # order 4 through a division); see harness.workflow.PIECE_MEM_MB.
    priority: CASE_PRIORITY
    resources:
        mem_mb=evaluate_mem_mb(config),
    conda:
        "../environment.yml"
    shell:
        "python -m harness evaluate {input.case} --backends {wildcards.backend} --piece {wildcards.piece} --results {params.results} --threads {threads} --study {params.study:q} > {log} 2>&1"


rule compare_case:
    input:
        case="cases/{case}.yaml",
        reference="results/{case}/reference.parquet",
        evaluations=backend_files(config, "evaluations"),
        edges=backend_files(config, "edges"),
        localised=backend_files(config, "localised"),
        code=stage_sources("compare"),
    output:
        errors="results/{case}/errors.parquet",
        # The case's summary rows and findings, read by collect_results and
        # render_case_page.
        summary="results/{case}/summary.parquet",
        findings="results/{case}/findings.parquet",
    params:
        study=stage_settings(config, "compare"),
        results=lambda w, output: Path(output[0]).parents[1],
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
        "python -m harness compare {input.case} --results {params.results} --study {params.study:q} > {log} 2>&1"
