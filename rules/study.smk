# The whole study: the collected summary of every valid case.


rule collect_results:
    input:
        errors=expand("results/{case}/errors.parquet", case=CASES),
        summaries=expand("results/{case}/summary.parquet", case=CASES),
        findings=expand("results/{case}/findings.parquet", case=CASES),
        code=stage_sources("collect"),
    output:
        parquet="results/summary.parquet",
        csv=report(
            "results/summary.csv",
            category="Study",
            labels={"table": "summary"},
        ),
        findings="results/findings.parquet",
        findings_csv=report(
            "results/findings.csv",
            category="Study",
            labels={"table": "findings"},
        ),
        # The findings grouped by mechanism (harness.causes), and what a framework does
        # not offer.
        root_causes="results/root_causes.parquet",
        root_causes_csv=report(
            "results/root_causes.csv",
            category="Study",
            labels={"table": "root causes"},
        ),
        unsupported="results/unsupported.parquet",
        unsupported_csv="results/unsupported.csv",
    log:
        "logs/collect_results.log",
    benchmark:
        "logs/collect_results.benchmark.tsv"
    resources:
        mem_mb=1000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness collect {input.errors} --results results --out {output.parquet} > {log} 2>&1"


rule reproduce_root_causes:
    input:
        root_causes="results/root_causes.parquet",
        findings="results/findings.parquet",
        cases=expand("cases/{case}.yaml", case=CASES),
        code=lambda w: stage_sources("reproduce", backend=w.backend),
    output:
        "results/reproducers/{backend}.parquet",
    params:
        # The tolerances decide whether a script shows its failure.
        study=stage_settings(config, "compare"),
    log:
        "logs/reproduce_root_causes.{backend}.log",
    benchmark:
        "logs/reproduce_root_causes.{backend}.benchmark.tsv"
    resources:
        mem_mb=2000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness repro --backend {wildcards.backend} --results results --cases cases --study {params.study:q} > {log} 2>&1"


rule render_case_page:
    input:
        errors="results/{case}/errors.parquet",
        summary="results/{case}/summary.parquet",
        findings="results/{case}/findings.parquet",
        case="cases/{case}.yaml",
        code=stage_sources("report"),
    output:
        report("reports/{case}.html", category="Cases", labels={"case": "{case}"}),
    log:
        "logs/{case}/render_case_page.log",
    benchmark:
        "logs/{case}/render_case_page.benchmark.tsv"
    priority: CASE_PRIORITY
    resources:
        mem_mb=1500,
    conda:
        "../environment.yml"
    shell:
        "python -m harness report --case {wildcards.case} --results results --reports reports --cases cases > {log} 2>&1"


rule render_report:
    input:
        summary="results/summary.parquet",
        findings="results/findings.parquet",
        root_causes="results/root_causes.parquet",
        unsupported="results/unsupported.parquet",
        reproducers=expand("results/reproducers/{backend}.parquet", backend=BACKENDS),
        pages=expand("reports/{case}.html", case=CASES),
        # Every case file, the broken ones too: the index lists what does not validate.
        cases=expand("cases/{case}.yaml", case=CASES + BROKEN),
        code=stage_sources("report"),
    output:
        index=report(
            "reports/index.html",
            category="Study",
            labels={"page": "index"},
        ),
    log:
        "logs/render_report.log",
    benchmark:
        "logs/render_report.benchmark.tsv"
    resources:
        mem_mb=1000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness report --index-only --results results --reports reports --cases cases > {log} 2>&1"


# The frameworks side by side: it reads no reproducer, so it runs beside them (on two
# cores the TensorFlow reproducers' job would otherwise end the study on one core).
rule render_frameworks:
    input:
        summary="results/summary.parquet",
        findings="results/findings.parquet",
        # The frameworks page reads each case's errors table.
        errors=expand("results/{case}/errors.parquet", case=CASES),
        cases=expand("cases/{case}.yaml", case=CASES),
        code=stage_sources("report"),
    output:
        report(
            "reports/frameworks.html",
            category="Study",
            labels={"page": "frameworks"},
        ),
    log:
        "logs/render_frameworks.log",
    benchmark:
        "logs/render_frameworks.benchmark.tsv"
    resources:
        mem_mb=1000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness report --frameworks-only --results results --reports reports --cases cases > {log} 2>&1"
